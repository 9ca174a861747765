#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "compiler/plan/output_writer.h"
#include "tests/plan/support.h"

using namespace mlenv;
using namespace mlenv::plan::testing;

namespace {

// `count` files over `count / 10` directories, each holding its own path.
target::Output many_files(int count) {
  target::Output out;
  for (int i = 0; i < count; ++i) {
    std::string path = "c/e" + std::to_string(i / 10) + "/f" + std::to_string(i) + ".yaml";
    out.files.push_back({path, path + "\n"});
  }
  return out;
}

}  // namespace

TEST_CASE("the output tree holds every file, byte for byte", "[output]") {
  TempDir dir;
  target::Output out = many_files(2000);  // enough to be written by several threads
  REQUIRE(plan::write_output_tree(out, dir.path()).empty());
  for (const target::File& f : out.files) CHECK(read_file(dir.path() + "/" + f.path) == f.content);
  // Writing again overwrites in place.
  out.files[5].content = "changed\n";
  REQUIRE(plan::write_output_tree(out, dir.path()).empty());
  CHECK(read_file(dir.path() + "/" + out.files[5].path) == "changed\n");
}

TEST_CASE("the output writer names the first file it cannot write, and refuses escapes",
          "[output]") {
  TempDir dir;
  target::Output out = many_files(2000);
  std::filesystem::create_directories(dir.path() + "/c/e150/f1500.yaml");  // a directory
  CHECK(plan::write_output_tree(out, dir.path()) ==
        "cannot write `" + dir.path() + "/c/e150/f1500.yaml`: Is a directory");
  CHECK(read_file(dir.path() + "/c/e199/f1999.yaml") == "c/e199/f1999.yaml\n");

  for (const char* bad : {"../x.yaml", "/etc/x.yaml", "c/./x.yaml", "c//x.yaml"}) {
    target::Output escape;
    escape.files.push_back({bad, "x"});
    CHECK(plan::write_output_tree(escape, dir.path()) ==
          std::string("refusing to write `") + bad + "` outside the output");
  }
}

TEST_CASE("the object stream is every object in stream order, as YAML documents", "[output]") {
  target::Output out = many_files(3);
  out.stream = {2, 0};
  std::ostringstream stream;
  plan::write_object_stream(out, stream);
  CHECK(stream.str() == "---\nc/e0/f2.yaml\n---\nc/e0/f0.yaml\n");
}
