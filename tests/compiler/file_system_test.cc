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

// A link out of the program's folders is refused before a byte is read; one inside is read.
TEST_CASE("read_inside refuses a file whose real path is outside the folders") {
  TempDir dir;
  std::filesystem::create_directories(dir.path + "/repo/.git");
  std::filesystem::create_directories(dir.path + "/repo/envs");
  std::ofstream(dir.path + "/secret") << "token\n";
  std::ofstream(dir.path + "/repo/a.mlenv") << "env a {}\n";
  std::filesystem::create_symlink("../../secret", dir.path + "/repo/envs/leak.mlenv");
  std::filesystem::create_symlink("../a.mlenv", dir.path + "/repo/envs/ok.mlenv");
  std::vector<std::string> folders = program_folders(dir.path + "/repo/envs/main.mlenv", {});
  REQUIRE(folders.size() == 1);
  CHECK(folders[0] == std::filesystem::canonical(dir.path + "/repo").string());
  DiskFileSystem disk;
  std::string error;
  CHECK(disk.read_inside(dir.path + "/repo/envs/ok.mlenv", folders, error) == "env a {}\n");
  CHECK_FALSE(disk.read_inside(dir.path + "/repo/envs/leak.mlenv", folders, error));
  CHECK(error.find("outside the program's repository") != std::string::npos);
  CHECK_FALSE(disk.read_inside(dir.path + "/secret", folders, error));
  // A site folder admits its files.
  folders = program_folders(dir.path + "/repo/envs/main.mlenv", {dir.path});
  CHECK(disk.read_inside(dir.path + "/secret", folders, error) == "token\n");
}

}  // namespace
}  // namespace mlenv
