// The checker on in-memory programs: merging semantics that goldens show only indirectly.

#include <algorithm>

#include <catch2/catch.hpp>

#include "compiler/base/file_system.h"
#include "compiler/check/check.h"
#include "compiler/check/platform_rules.h"
#include "compiler/check/types.h"
#include "targets/provider.h"

namespace mlenv {
namespace {

// Checks `text` with the providers' rules, or with `platforms`.
std::optional<ir::Program> check(
    const std::string& text, Diagnostics& diagnostics,
    const check::PlatformRulesList& platforms = target::check_rules()) {
  MemoryFileSystem files;
  files.add("main.mlenv", text);
  SourceManager sources;
  return check::check_program("main.mlenv", files, sources, diagnostics, platforms);
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

// A local env's nodes are processes of this machine (or host-network containers), never pods:
// the rules of pods do not apply. A rail without an attachment asked for one (E0402) beside
// E0418 saying a rail's `network` has no place there; `restarts` on a dev env got W0404 beside
// E0418; an env name that is no DNS label got E0320, though no Kubernetes object is named.
TEST_CASE("a local env is checked by the rules of hosts, not of pods") {
  const std::string text = R"(
cluster laptop {
  platform = local
  api      = "localhost"
  network {
    rdma {
      rails = [{ device = "mlx5_0", interface = "ib0", link_layer = infiniband }]
    }
  }
}
env Dev_Box {
  cluster  = laptop
  network  = rdma
  restarts = 2
}
)";
  Diagnostics diagnostics;
  check(text, diagnostics);
  std::vector<Code> codes;
  for (const Diagnostic& d : diagnostics.all()) codes.push_back(d.code);
  CHECK(std::count(codes.begin(), codes.end(), Code::E0418) == 1);  // `restarts`
  CHECK(std::count(codes.begin(), codes.end(), Code::E0402) == 0);
  CHECK(std::count(codes.begin(), codes.end(), Code::W0404) == 0);
  CHECK(std::count(codes.begin(), codes.end(), Code::E0320) == 0);
}

// Once the value budget (limits::kMaxValueBytes) is spent, every copy fails: the first failure
// is E0104, and each later one must still mark what it was building as broken. A fuzzer found an
// env whose `cluster = c` failed silently after the budget: the env looked complete without a
// cluster, and the rules read the missing cluster (compiler/check/rules.cc, a null Value).
TEST_CASE("values that fail after the budget is spent mark their env broken") {
  constexpr std::size_t kChunk = 65536;
  std::string text =
      "cluster c {\n  api = \"a.example.com\"\n  namespace = \"ns\"\n  storage {\n"
      "    mode  = rwx\n    class = \"a\"\n  }\n}\n"
      "image src {\n  from = \"" +
      std::string(kChunk, 'a') + "\"\n  tag = \"t\"\n}\n";
  int images = 0;
  auto add_image = [&](std::size_t bytes) {
    std::string from;
    for (; bytes >= kChunk; bytes -= kChunk) from += "${src.from}";
    from += std::string(bytes, 'a');
    text +=
        "image i" + std::to_string(images++) + " {\n  from = \"" + from + "\"\n  tag = \"t\"\n}\n";
  };
  // Strings of 1 MiB until the budget is crossed, then of every power of two: each one that
  // fits is spent, so nothing of the budget is left for the env's copy of its cluster.
  for (std::size_t i = 0; i < 130; ++i) add_image(16 * kChunk);
  for (std::size_t bytes = 8 * kChunk; bytes > 0; bytes /= 2) add_image(bytes);
  text += "env late {\n  cluster = c\n  command = [\"true\"]\n}\n";
  Diagnostics diagnostics;
  auto program = check(text, diagnostics);
  CHECK_FALSE(program.has_value());
  REQUIRE(diagnostics.all().size() == 1);
  CHECK(diagnostics.all().front().code == Code::E0104);
}

// Issue #11.3: each link of an `extends` chain that appends used to copy its parent's whole
// list, so 9,000 links built 648 MB of items and crossed the value budget (E0104). Lists now
// share their items (ValueList); a link that diverges from an already-extended parent copies.
TEST_CASE("an extends chain that appends shares its list: linear, and no link sees another's") {
  std::string text =
      "cluster c {\n  api = \"a.example.com\"\n  namespace = \"ns\"\n"
      "  storage {\n    mode  = rwx\n    class = \"a\"\n  }\n}\n"
      "image i0 {\n  from = \"base:1\"\n  tag = \"t\"\n  apt = [\"p0\"]\n}\n";
  constexpr int kLinks = 9000;
  for (int i = 1; i < kLinks; ++i) {
    text += "image i" + std::to_string(i) + " extends i" + std::to_string(i - 1) +
            " { apt += [\"p" + std::to_string(i) + "\"] }\n";
  }
  // Forks of a parent that a later link already extended, and a list appended to itself.
  text +=
      "image fork extends i4000 { apt += [\"fork\"] }\n"
      "image twice extends i1 { apt += i1.apt }\n";
  for (const char* image : {"i8999", "fork", "twice", "i4001"}) {
    text += std::string("env e-") + image + " {\n  cluster = c\n  image = " + image + "\n}\n";
  }
  Diagnostics diagnostics;
  auto program = check(text, diagnostics);
  REQUIRE(diagnostics.error_count() == 0);
  REQUIRE(program.has_value());
  const auto& last = env(*program, "e-i8999").image.apt;
  REQUIRE(last.size() == kLinks);
  CHECK(last.front() == "p0");
  CHECK(last.back() == "p8999");
  const auto& fork = env(*program, "e-fork").image.apt;
  REQUIRE(fork.size() == 4002);
  CHECK(fork[4000] == "p4000");
  CHECK(fork.back() == "fork");
  CHECK(env(*program, "e-i4001").image.apt.back() == "p4001");
  CHECK(env(*program, "e-twice").image.apt == std::vector<std::string>{"p0", "p1", "p0", "p1"});
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
  // Lowered for Slurm's --cpus-per-task and --mem (targets/slurm), which take whole numbers.
  CHECK(p.resources.whole_cpus == 16);
  CHECK(p.resources.memory_mib == 131072);
  CHECK(p.master_port == 29500);
  CHECK(p.protect);
}

// E0440: an acceptance sweep's 2 x max_bytes + 1 GiB must fit one GPU, whose memory is
// `gpus.memory`, else the size in the product label; with neither there is nothing to compare.
TEST_CASE("an acceptance sweep must fit the GPU's memory") {
  auto sweep = [](const std::string& gpus, const std::string& max_bytes) {
    Diagnostics diagnostics;
    std::string text = std::string(kBase) + "cluster g extends parent {\n  gpus {\n" + gpus +
                       "  }\n}\nenv accept {\n  cluster = g\n  image = img\n"
                       "  acceptance { max_bytes = " +
                       max_bytes + " }\n}\n";
    check(text, diagnostics);
    std::vector<Code> codes;
    for (const Diagnostic& d : diagnostics.all()) codes.push_back(d.code);
    return std::count(codes.begin(), codes.end(), Code::E0440);
  };
  const std::string h100 = "    per_node = 8\n    product = \"NVIDIA-H100-80GB-HBM3\"\n";
  CHECK(sweep(h100, "8Gi") == 0);
  CHECK(sweep(h100, "36Gi") == 0);  // 73 GiB of 74.5
  CHECK(sweep(h100, "37Gi") == 1);  // 75 GiB
  CHECK(sweep("    per_node = 8\n    product = \"NVIDIA-H200\"\n", "64Gi") == 0);
  CHECK(sweep("    per_node = 8\n    product = \"NVIDIA-H200\"\n    memory = 141G\n", "66Gi") == 1);
  CHECK(sweep("    per_node = 8\n    memory = 141G\n", "60Gi") == 0);
}

TEST_CASE("acceptance.max_bytes reaches boot.json as the bytes it says, exponents included") {
  // Lowering once read `2e9` as 2 and `1Pi` as 1 (its own parser knew neither); every phase
  // now reads quantities through compiler/base/quantity.h.
  for (const auto& [written, bytes] : {std::pair<const char*, std::int64_t>{"2e9", 2000000000},
                                       {"1.5Gi", std::int64_t{3} << 29},
                                       {"1Ti", std::int64_t{1} << 40},
                                       {"8", 8}}) {
    Diagnostics diagnostics;
    auto program =
        check(std::string(kBase) + "cluster g extends parent {\n" + "  gpus { per_node = 8 }\n}\n" +
                  "env a {\n  cluster = g\n  image = img\n" +
                  "  acceptance { max_bytes = " + written + " }\n}\n",
              diagnostics);
    INFO(written);
    REQUIRE(program.has_value());
    CHECK(env(*program, "a").acceptance.max_bytes == bytes);
  }
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

// Issue #11.21: E0305 shows the form a value must have in words (check/types.cc), never a raw
// regular expression; a pattern added to schema/ without words fails here.
TEST_CASE("every pattern of the schemas reads in words") {
  SourceManager sources;
  Diagnostics diagnostics;
  auto registry = check::load_types(sources, diagnostics);
  REQUIRE(diagnostics.error_count() == 0);
  std::size_t patterns = 0;
  for (const auto& [schema_name, schema] : registry->schemas) {
    for (const check::FieldDef& field : schema.fields) {
      for (const check::Type* type = &field.type; type; type = type->element.get()) {
        if (type->pattern_text.empty()) continue;
        ++patterns;
        INFO(schema_name << "." << field.name << ": " << type->pattern_text);
        CHECK(type->pattern_words.find("the form /") == std::string::npos);
      }
    }
  }
  CHECK(patterns >= 12);
}

// A platform's rules as the checker sees them: the fields it lists, and what it was asked.
class RecordingRules : public check::PlatformRules {
 public:
  RecordingRules(ir::Platform platform, std::vector<check::PlatformField> fields)
      : platform_(platform), fields_(std::move(fields)) {}
  ir::Platform platform() const override { return platform_; }
  std::vector<check::PlatformField> fields() const override { return fields_; }
  void check(const check::PlatformEnv& env, check::PlatformReport&) const override {
    checked.push_back(env.name + " on " + env.cluster.decl);
  }
  void check_program(const ir::Program& program, Diagnostics&) const override {
    programs.push_back(program.envs.size());
  }

  mutable std::vector<std::string> checked;
  mutable std::vector<std::size_t> programs;

 private:
  ir::Platform platform_;
  std::vector<check::PlatformField> fields_;
};

const check::PlatformField kPartition = {false, {"partition"}};

constexpr const char* kLocalWithPartition = R"(
cluster lab {
  platform  = local
  api       = "localhost"
  partition = "gpu"
}
env a {
  cluster = lab
  gpus    = 0
}
)";

// compiler/check names no platform: a field is E0418 because another platform's rules list it,
// and each env is checked by the rules of its cluster's platform, which check_program is given.
TEST_CASE("the platform rules check_program is given decide E0418 and check each env") {
  RecordingRules local(ir::Platform::local, {});
  RecordingRules slurm(ir::Platform::slurm, {kPartition});
  Diagnostics diagnostics;
  CHECK_FALSE(check(kLocalWithPartition, diagnostics, {&local, &slurm}));
  REQUIRE(diagnostics.all().size() == 1);
  CHECK(diagnostics.all()[0].code == Code::E0418);
  CHECK(diagnostics.all()[0].message == "`cluster.partition` does not apply on platform `local`");
  CHECK(local.checked == std::vector<std::string>{"a on lab"});
  CHECK(slurm.checked.empty());
  CHECK(local.programs == std::vector<std::size_t>{0});  // the env had an error: not lowered

  // The same program where the local platform has the field, and where no platform lists it.
  RecordingRules local_with(ir::Platform::local, {kPartition});
  for (const check::PlatformRulesList& list :
       {check::PlatformRulesList{&local_with, &slurm}, check::PlatformRulesList{&local}}) {
    Diagnostics clean;
    auto program = check(kLocalWithPartition, clean, list);
    CHECK(program.has_value());
    CHECK_FALSE(clean.has_errors());
  }
  CHECK(local_with.programs == std::vector<std::size_t>{1});
}

}  // namespace
}  // namespace mlenv
