#pragma once
// Git imports as the loader reads them, through one interface: `mlenvc get` backs it with
// fetches (compiler/driver/cmd_get.cc), every other command with LockedGitFiles, which reads
// only the cache checked against mlenv.lock and never fetches.

#include <map>
#include <optional>
#include <string>
#include <variant>

#include "compiler/base/file_system.h"
#include "compiler/base/git_source.h"
#include "compiler/check/lock_file.h"
#include "compiler/diag/diagnostic.h"

namespace mlenv::check {

/// A file of a git source, as the loader reads it.
struct GitFile {
  std::string text;
  std::string commit;     ///< the commit it was read at, 40 hex digits
  std::string disk_path;  ///< where diagnostics point: its copy in the cache
};

/// Why a git file could not be read; the loader reports it at the import.
struct GitFailure {
  Code code = Code::E0221;
  std::string message;
  std::string label;
};

/// Where the loader reads git imports from.
class GitFiles {
 public:
  virtual ~GitFiles() = default;
  /// The file `source.path` of `source`'s repository at the commit its ref resolves to.
  virtual std::variant<GitFile, GitFailure> read(const GitSource& source) = 0;
};

/// Reads git imports from the cache in `folder` (the root file's), checked against the
/// mlenv.lock there: the lock is read at the first git import, and each source's cached
/// files are hashed once, all of them, before any is used.
class LockedGitFiles : public GitFiles {
 public:
  LockedGitFiles(const FileSystem& files, std::string folder)
      : files_(files), folder_(std::move(folder)) {}
  std::variant<GitFile, GitFailure> read(const GitSource& source) override;

 private:
  /// The lock, read once; a failure to read it is kept and returned for every import.
  std::variant<const LockFile*, GitFailure> lock();
  /// Every file of `locked` from the cache, checked against its hash (once per source).
  std::variant<const std::map<std::string, std::string>*, GitFailure> cached(
      const LockedSource& locked);
  std::string in_folder(const std::string& path) const;

  const FileSystem& files_;
  std::string folder_;  ///< "" for the current directory
  std::optional<std::variant<LockFile, GitFailure>> lock_;
  std::map<std::string, std::variant<std::map<std::string, std::string>, GitFailure>> checked_;
};

}  // namespace mlenv::check
