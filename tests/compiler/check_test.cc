// The checker on in-memory programs: merging semantics that goldens show only indirectly.

#include <catch2/catch.hpp>

#include "compiler/base/file_system.h"
#include "compiler/check/check.h"

namespace mlenv {
namespace {

std::optional<ir::Program> check(const std::string& text, Diagnostics& diagnostics) {
  MemoryFileSystem files;
  files.add("main.mlenv", text);
  SourceManager sources;
  return check::check_program("main.mlenv", files, sources, diagnostics);
}

const ir::Env& env(const ir::Program& program, const std::string& name) {
  for (const ir::Env& e : program.envs) {
    if (e.name == name) return e;
  }
  FAIL("no env " << name);
  return program.envs.front();
}

constexpr const char* kBase = R"(
cluster parent {
  api       = "api.example.com"
  namespace = "ns"
  storage {
    mode  = rwx
    class = "a"
  }
  nodes = ["n1"]
}
cluster child extends parent {
  storage { class = "b" }
  nodes += ["n2"]
}
image img {
  from = "base:1"
  tag  = "t"
}
env e-parent {
  cluster = parent
  image   = img
}
env e-child {
  cluster = child
  image   = img
  storage { workspace = 1Gi }
}
)";

TEST_CASE("a child's merge and += never change its parent") {
  Diagnostics diagnostics;
  auto program = check(kBase, diagnostics);
  REQUIRE(program.has_value());
  const ir::Env& p = env(*program, "e-parent");
  const ir::Env& c = env(*program, "e-child");
  CHECK(p.cluster.storage.class_name == "a");
  CHECK(p.cluster.nodes == std::vector<std::string>{"n1"});
  CHECK(c.cluster.storage.class_name == "b");
  CHECK(c.cluster.storage.mode == ir::StorageMode::rwx);  // kept from the parent
  CHECK(c.cluster.nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(c.storage.workspace.text == "1Gi");            // the env's override
  CHECK(c.cluster.storage.workspace.text == "100Gi");  // the cluster's default, untouched
  CHECK(p.storage.workspace.text == "100Gi");
}

TEST_CASE("defaults, transport fallback and per-pod GPUs") {
  Diagnostics diagnostics;
  auto program = check(kBase, diagnostics);
  REQUIRE(program.has_value());
  const ir::Env& p = env(*program, "e-parent");
  CHECK(p.transport == ir::Transport::tcp);
  CHECK(p.transport_note.find("no RDMA rails") != std::string::npos);
  CHECK(p.nodes == 1);
  CHECK(p.gpus == 0);
  CHECK(p.nproc_per_node == 1);
  CHECK(p.resources.memory.text == "128Gi");
  CHECK(p.master_port == 29500);
  CHECK(p.protect);
}

TEST_CASE("the inputs of a program include the schema files, sorted") {
  Diagnostics diagnostics;
  auto program = check(kBase, diagnostics);
  REQUIRE(program.has_value());
  REQUIRE(program->inputs.size() == 6);
  CHECK(program->inputs[0].path == "main.mlenv");
  CHECK(program->inputs[1].path == "schema/cluster.mlenv");
}

TEST_CASE("several errors are reported in one run, and no program") {
  Diagnostics diagnostics;
  auto program =
      check("env a {\n  nodes = 0\n  networc = rdma\n}\nenv b { debug = 3 }\n", diagnostics);
  CHECK_FALSE(program.has_value());
  std::vector<Code> codes;
  for (const Diagnostic& d : diagnostics.all()) codes.push_back(d.code);
  CHECK(std::count(codes.begin(), codes.end(), Code::E0304) == 1);
  CHECK(std::count(codes.begin(), codes.end(), Code::E0302) == 1);
  CHECK(std::count(codes.begin(), codes.end(), Code::E0301) == 1);
}

}  // namespace
}  // namespace mlenv
