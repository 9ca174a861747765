#pragma once
// mlenv.lock (schema/LANGUAGE.md, "Git imports"): what `mlenvc get` resolved each git source
// to, and the cache folder `.mlenv/` that holds the files. Written by `mlenvc get`, read by every
// command that loads a program.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlenv::check {

/// The lock file's name, in the folder of the root file.
inline constexpr std::string_view kLockFileName = "mlenv.lock";
/// The largest mlenv.lock read: one source takes a few hundred bytes, and a compilation loads at
/// most limits::kMaxFiles files.
inline constexpr std::size_t kMaxLockFileBytes = 1024 * 1024;
/// The cache folder's name, beside the lock; `mlenvc get` makes git ignore it.
inline constexpr std::string_view kCacheFolder = ".mlenv";

/// One repository at a ref, as `mlenvc get` resolved it.
struct LockedSource {
  std::string url;
  std::string ref;                 ///< as the imports ask it
  std::string commit;              ///< 40 hex digits
  std::string sha256;              ///< files_sha256 of the files used
  std::vector<std::string> files;  ///< the files used, paths inside the repository, sorted
};

/// The parsed mlenv.lock: sources sorted by URL, then ref.
struct LockFile {
  std::vector<LockedSource> sources;

  /// The entry of `url` at `ref`, or nullptr.
  const LockedSource* find(const std::string& url, const std::string& ref) const;
};

/// Parses mlenv.lock as JSON of the shape `write_lock_file` writes (no YAML: no aliases), at
/// most kMaxLockFileBytes; nullopt with the reason in `error` when it is not as `write_lock_file`
/// writes it (a commit that is not 40 hex digits, a file path leaving the repository, ...).
std::optional<LockFile> parse_lock_file(std::string_view text, std::string& error);

/// The text of mlenv.lock: JSON, sources and files sorted, ending with a newline.
std::string write_lock_file(const LockFile& lock);

/// The SHA-256 mlenv.lock records for a source: over each file in path order, its path, a NUL,
/// its size in decimal, a NUL and its bytes.
std::string files_sha256(const std::map<std::string, std::string>& files);

/// The cached copy of a source's files at `commit`, relative to the lock's folder:
/// `.mlenv/git/<first 16 hex of SHA-256 of the URL>/<commit>`.
std::string cache_folder(const std::string& url, const std::string& commit);

}  // namespace mlenv::check
