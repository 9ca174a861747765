// Golden output trees of the IR fixtures: tests/targets/golden/<fixture>/ holds every file the
// target renders (except `_runtime/`, compared with the embedded runtime sources instead).
// Regenerate with `MLENV_UPDATE_GOLDENS=1 ctest -R targets.golden` and review the git diff.

#include <unistd.h>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "compiler/plan/output_writer.h"
#include "targets/runtime_sources.h"
#include "tests/targets/fixtures.h"
#include "tests/targets/test_util.h"

using namespace mlenv;
using namespace mlenv::testing;
namespace fs = std::filesystem;

namespace {

bool updating() {
  const char* v = std::getenv("MLENV_UPDATE_GOLDENS");
  return v && std::string(v) == "1";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

target::Output without_runtime(target::Output out) {
  std::vector<target::File> kept;
  for (target::File& f : out.files) {
    if (f.path.rfind("_runtime/", 0) != 0) kept.push_back(std::move(f));
  }
  out.files = std::move(kept);
  out.stream.clear();
  return out;
}

}  // namespace

TEST_CASE("golden output trees of the IR fixtures", "[golden]") {
  for (auto& [name, program] : all_fixtures()) {
    INFO(name);
    Diagnostics d;
    target::Output out = without_runtime(render(program, d));
    fs::path dir = fs::path(MLENV_GOLDEN_DIR) / name;
    if (updating()) {
      fs::remove_all(dir);
      REQUIRE(plan::write_output_tree(out, dir.string()).empty());
      continue;
    }
    REQUIRE(fs::exists(dir));
    std::set<std::string> expected;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file()) expected.insert(fs::relative(e.path(), dir).generic_string());
    }
    std::set<std::string> actual;
    for (const target::File& f : out.files) {
      actual.insert(f.path);
      INFO(f.path);
      CHECK(expected.count(f.path) == 1);
      if (expected.count(f.path)) CHECK(slurp(dir / f.path) == f.content);
    }
    for (const std::string& e : expected) {
      INFO(e);
      CHECK(actual.count(e) == 1);
    }
  }
}

TEST_CASE("_runtime/ holds the runtime sources byte for byte", "[golden]") {
  Diagnostics d;
  target::Output out = render(program_of({dev_env()}), d);
  std::size_t found = 0;
  for (const auto& [path, bytes] : target::runtime_sources()) {
    const target::File* f = find_file(out, "_runtime/" + std::string(path));
    REQUIRE(f);
    CHECK(f->content == bytes);
    ++found;
  }
  CHECK(found > 0);
  // runtime/ builds on its own (`cmake -S runtime`): the Dockerfile's build stage relies on it.
  const target::File* cmake = find_file(out, "_runtime/CMakeLists.txt");
  REQUIRE(cmake);
  CHECK(cmake->content.find("project(") != std::string::npos);
}

TEST_CASE("kubectl kustomize builds every env directory", "[golden][kustomize]") {
  if (std::system(MLENV_KUBECTL " version --client >/dev/null 2>&1") != 0) {
    WARN("kubectl is absent: kustomize check skipped");
    return;
  }
  fs::path root = fs::temp_directory_path() / ("mlenv-kustomize-" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::size_t built = 0;
  for (auto& [name, program] : all_fixtures()) {
    Diagnostics d;
    target::Output out = render(program, d);
    fs::path dir = root / name;
    REQUIRE(plan::write_output_tree(out, dir.string()).empty());
    for (const target::File& f : out.files) {
      if (fs::path(f.path).filename() != "kustomization.yaml") continue;
      fs::path env_dir = dir / fs::path(f.path).parent_path();
      std::string cmd = std::string(MLENV_KUBECTL) + " kustomize " + env_dir.string() + " > " +
                        (env_dir / "kustomized.out").string() + " 2>&1";
      INFO(cmd << "\n" << slurp(env_dir / "kustomized.out"));
      CHECK(std::system(cmd.c_str()) == 0);
      ++built;
    }
  }
  fs::remove_all(root);
  CHECK(built >= 5);
}
