// Every write is whole and stays where it belongs (issue 21, items 5, 7 and 11): build's output
// never follows a link out of `-o`, plan replaces files (a hard-linked backup keeps its bytes),
// and a write that fails at the disk leaves the old file whole and says so.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "compiler/base/atomic_file.h"
#include "compiler/plan/output_writer.h"
#include "compiler/plan/pack_file.h"
#include "compiler/plan/worktree.h"
#include "tests/plan/support.h"

using namespace mlenv;
using namespace mlenv::plan::testing;
namespace fs = std::filesystem;

TEST_CASE("atomic writes: build -o never writes through a link in the output", "[output]") {
  TempDir dir;
  TempDir outside;
  write_file(outside.path() + "/config", "[core]\n");
  target::Output out;
  out.files.push_back({"c/e/f.yaml", "x: 1\n"});
  // A link where a folder of the output goes: once it sent build's files into `.git/`.
  fs::create_symlink(outside.path(), dir.path() + "/c");
  CHECK(plan::write_output_tree(out, dir.path()) ==
        "refusing to write through the symbolic link `" + dir.path() + "/c`");
  CHECK_FALSE(fs::exists(outside.path() + "/e"));
  // A link at the file itself is replaced, not followed.
  fs::remove(dir.path() + "/c");
  fs::create_directories(dir.path() + "/c/e");
  fs::create_symlink(outside.path() + "/config", dir.path() + "/c/e/f.yaml");
  REQUIRE(plan::write_output_tree(out, dir.path()).empty());
  CHECK(read_file(outside.path() + "/config") == "[core]\n");
  CHECK_FALSE(fs::is_symlink(dir.path() + "/c/e/f.yaml"));
  CHECK(read_file(dir.path() + "/c/e/f.yaml") == "x: 1\n");
}

TEST_CASE("atomic writes: plan replaces files, so a hard-linked copy keeps its bytes", "[plan]") {
  TempDir dir;
  plan::PlanTree tree;
  tree.add("c/e/boot.json", "{\"nnodes\": 2}\n");
  plan::write_plan_files(dir.path(), tree, {}, nullptr);
  fs::create_hard_link(dir.path() + "/c/e/boot.json", dir.path() + "/backup.json");
  plan::PlanTree next;
  next.add("c/e/boot.json", "{\"nnodes\": 4}\n");
  plan::write_plan_files(dir.path(), next, {}, nullptr);
  CHECK(read_file(dir.path() + "/c/e/boot.json") == "{\"nnodes\": 4}\n");
  CHECK(read_file(dir.path() + "/backup.json") == "{\"nnodes\": 2}\n");
}

TEST_CASE("atomic writes: a write the disk refuses fails and leaves the old file whole",
          "[output]") {
  TempDir dir;
  const std::string path = dir.path() + "/source.mlenv";
  const std::string old_text(10000, 'a');
  write_file(path, old_text);
  // A child limited to 4 KiB files stands for a full disk: each write past it fails (EFBIG),
  // as ENOSPC does, where `fmt -w` once cut the source to 4,096 bytes and exited 0.
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    std::string error;
    bool ok = write_file_atomic(path, std::string(10000, 'b'), 0644, error);
    _exit(!ok && error.starts_with("cannot write `" + path + "`: ") ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_file(path) == old_text);
  // No temporary file is left beside it.
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("atomic writes: two plans writing one pack never share a temporary file", "[plan]") {
  TempDir dir;
  std::string data(200000, 'x');
  plan::PackObject blob;
  blob.id.fill(7);
  blob.data = data;
  plan::PackFiles files = plan::build_pack({blob});
  // Before, both wrote `tmp_pack-<sum>.pack` with truncation: one renamed the other's half
  // file, or found it gone ("cannot rename").
  auto writer = [&] {
    for (int i = 0; i < 20; ++i) plan::write_pack_files(dir.path(), files);
  };
  std::thread a(writer);
  std::thread b(writer);
  a.join();
  b.join();
  int packs = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    CHECK_FALSE(name.starts_with("tmp_"));
    if (name.ends_with(".pack")) {
      ++packs;
      CHECK(fs::file_size(entry.path()) == files.pack.size());
    }
  }
  CHECK(packs == 1);
}
