// DiskFileSystem reads regular files only, by their real content.

#include "compiler/base/file_system.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace mlenv {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mlenv-fs-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST_CASE("a regular file is read whole, through a link too") {
  TempDir dir;
  std::ofstream(dir.path + "/a.mlenv") << "env a {}\n";
  std::filesystem::create_symlink(dir.path + "/a.mlenv", dir.path + "/link.mlenv");
  DiskFileSystem disk;
  std::string error;
  CHECK(disk.read(dir.path + "/a.mlenv", error) == "env a {}\n");
  CHECK(disk.read(dir.path + "/link.mlenv", error) == "env a {}\n");
}

// /proc files are "regular" with size 0 but yield content: a symlink to /proc/self/environ
// once passed, and an error excerpt printed the whole environment.
TEST_CASE("files whose content is not their reported size are refused") {
  TempDir dir;
  std::filesystem::create_symlink("/proc/self/environ", dir.path + "/env.mlenv");
  setenv("MLENV_FS_TEST_SECRET", "hunter2", 1);
  DiskFileSystem disk;
  std::string error;
  CHECK_FALSE(disk.read(dir.path + "/env.mlenv", error));
  CHECK(error.find("size changed") != std::string::npos);
  CHECK(error.find("hunter2") == std::string::npos);
  CHECK_FALSE(disk.read("/proc/self/status", error));
}

TEST_CASE("directories, FIFOs and devices are refused without blocking") {
  TempDir dir;
  REQUIRE(::mkfifo((dir.path + "/fifo.mlenv").c_str(), 0600) == 0);
  DiskFileSystem disk;
  std::string error;
  CHECK_FALSE(disk.read(dir.path + "/fifo.mlenv", error));
  CHECK(error == "not a regular file");
  CHECK_FALSE(disk.read(dir.path, error));
  CHECK(error == "not a regular file");
  CHECK_FALSE(disk.read("/dev/zero", error));
  CHECK(error == "not a regular file");
  CHECK_FALSE(disk.read(dir.path + "/missing.mlenv", error));
  CHECK(error == "no such file");
}

}  // namespace
}  // namespace mlenv
