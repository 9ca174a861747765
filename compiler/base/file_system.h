#pragma once
// Where source text comes from. The checker reads imports only through FileSystem, so tests
// run entirely in memory and `std/...` resolves to the embedded stdlib.

#include <map>
#include <optional>
#include <string>

namespace mlenv {

/// Read-only access to source files by path.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  /// The whole file, or nullopt if it cannot be read. `error` says why.
  virtual std::optional<std::string> read(const std::string& path, std::string& error) const = 0;
};

/// The real disk, with a size limit so hostile input cannot exhaust memory.
class DiskFileSystem : public FileSystem {
 public:
  std::optional<std::string> read(const std::string& path, std::string& error) const override;
};

/// Files held in memory (tests, and the embedded stdlib/schema).
class MemoryFileSystem : public FileSystem {
 public:
  void add(std::string path, std::string text) { files_[std::move(path)] = std::move(text); }
  std::optional<std::string> read(const std::string& path, std::string& error) const override;

 private:
  std::map<std::string, std::string> files_;
};

/// Normalizes `a/./b/../c` to `a/c`, keeping a leading `/` or leading `..` segments.
std::string normalize_path(const std::string& path);
/// The directory part of a path ("" for a bare name).
std::string parent_path(const std::string& path);

}  // namespace mlenv
