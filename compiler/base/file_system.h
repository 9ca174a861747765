#pragma once
// Where source text comes from. The checker reads imports only through FileSystem, so tests
// run entirely in memory and `std/...` resolves to the embedded stdlib.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlenv {

/// Read-only access to source files by path.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  /// The whole file, or nullopt if it cannot be read. `error` says why.
  virtual std::optional<std::string> read(const std::string& path, std::string& error) const = 0;
  /// As read(), but refused when the file's real path (links followed) lies under none of
  /// `folders` (real paths). Files with no links (memory) are read().
  virtual std::optional<std::string> read_inside(const std::string& path,
                                                 const std::vector<std::string>& folders,
                                                 std::string& error) const {
    (void)folders;
    return read(path, error);
  }
  /// Why the git import cache beside `folder` is not the user's own (user_cache.h), or
  /// nullopt; files with no disk (memory) have no cache to refuse.
  virtual std::optional<std::string> foreign_cache(const std::string& folder) const {
    (void)folder;
    return std::nullopt;
  }
};

/// The real disk, with a size limit so hostile input cannot exhaust memory.
class DiskFileSystem : public FileSystem {
 public:
  std::optional<std::string> read(const std::string& path, std::string& error) const override;
  std::optional<std::string> read_inside(const std::string& path,
                                         const std::vector<std::string>& folders,
                                         std::string& error) const override;
  std::optional<std::string> foreign_cache(const std::string& folder) const override;
};

/// Reads through another file system only the files under `folders`: a program's sources are
/// its repository's files and the site library's, never a link out of them (a pull request's
/// `helper.mlenv -> ~/.git-credentials` would print the token in a diagnostic's excerpt).
class ConfinedFileSystem : public FileSystem {
 public:
  ConfinedFileSystem(const FileSystem& inner, std::vector<std::string> folders)
      : inner_(inner), folders_(std::move(folders)) {}
  std::optional<std::string> read(const std::string& path, std::string& error) const override {
    return inner_.read_inside(path, folders_, error);
  }
  std::optional<std::string> foreign_cache(const std::string& folder) const override {
    return inner_.foreign_cache(folder);
  }

 private:
  const FileSystem& inner_;
  std::vector<std::string> folders_;
};

/// The real paths of the folders a program rooted at `root` may read: the git work tree that
/// holds it (the nearest folder above it with a `.git`; else the root file's folder), and the
/// `site` folders (MLENV_PATH). Those that do not exist are left out.
std::vector<std::string> program_folders(const std::string& root,
                                         const std::vector<std::string>& site);

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
