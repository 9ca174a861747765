#include "compiler/check/git_imports.h"

namespace mlenv::check {

std::string LockedGitFiles::in_folder(const std::string& path) const {
  return folder_.empty() ? path : folder_ + "/" + path;
}

std::variant<const LockFile*, GitFailure> LockedGitFiles::lock() {
  if (!lock_) {
    std::string path = in_folder(std::string(kLockFileName));
    std::string error;
    std::optional<std::string> text;
    if (std::optional<std::string> foreign = files_.foreign_cache(folder_)) {
      lock_ = GitFailure{Code::E0226, *foreign,
                         "git imports are read only from a cache `mlenvc get` made"};
    } else if (!(text = files_.read(path, error))) {
      lock_ = GitFailure{Code::E0221,
                         "`" + path + "` cannot be read (" + error +
                             "): git imports are read only from the cache it pins",
                         "run `mlenvc get` to fetch the git imports and write the lock"};
    } else if (std::optional<LockFile> parsed = parse_lock_file(*text, error)) {
      lock_ = std::move(*parsed);
    } else {
      lock_ = GitFailure{Code::E0221, "`" + path + "` is not a lock file mlenvc wrote: " + error,
                         "run `mlenvc get` to write it again"};
    }
  }
  if (const auto* failure = std::get_if<GitFailure>(&*lock_)) return *failure;
  return &std::get<LockFile>(*lock_);
}

std::variant<const std::map<std::string, std::string>*, GitFailure> LockedGitFiles::cached(
    const LockedSource& locked) {
  std::string folder = in_folder(cache_folder(locked.url, locked.commit));
  // By source, not folder: two refs at one commit share the folder but not the file list.
  auto [it, fresh] = checked_.try_emplace(locked.url + "?ref=" + locked.ref);
  if (fresh) {
    std::map<std::string, std::string> files;
    for (const std::string& path : locked.files) {
      std::string error;
      std::optional<std::string> text = files_.read(folder + "/" + path, error);
      if (!text) {
        it->second = GitFailure{Code::E0221,
                                "the cache of git::" + locked.url + "?ref=" + locked.ref +
                                    " is missing or stale: `" + folder + "/" + path +
                                    "` cannot be read (" + error + ")",
                                "run `mlenvc get` to fetch the locked commit again"};
        break;
      }
      files[path] = std::move(*text);
    }
    if (it->second.index() == 0 && files_sha256(files) != locked.sha256) {
      it->second =
          GitFailure{Code::E0222,
                     "the cached files of git::" + locked.url + "?ref=" + locked.ref + " in `" +
                         folder + "` do not match the sha256 mlenv.lock records for them",
                     "refused: the cache changed after `mlenvc get`, or mlenv.lock was "
                     "edited; `mlenvc get` fetches the locked commit again and says which"};
    } else if (it->second.index() == 0) {
      it->second = std::move(files);
    }
  }
  if (const auto* failure = std::get_if<GitFailure>(&it->second)) return *failure;
  return &std::get<0>(it->second);
}

std::variant<GitFile, GitFailure> LockedGitFiles::read(const GitSource& source) {
  auto locked_file = lock();
  if (const auto* failure = std::get_if<GitFailure>(&locked_file)) return *failure;
  const LockedSource* locked = std::get<const LockFile*>(locked_file)->find(source.url, source.ref);
  if (!locked) {
    return GitFailure{
        Code::E0221,
        "`" + source.repository() + "` is not in `" + in_folder(std::string(kLockFileName)) + "`",
        "run `mlenvc get` to fetch it and pin its commit"};
  }
  auto files = cached(*locked);
  if (const auto* failure = std::get_if<GitFailure>(&files)) return *failure;
  const auto& by_path = *std::get<0>(files);
  auto it = by_path.find(source.path);
  if (it == by_path.end()) {
    return GitFailure{Code::E0221,
                      "`" + source.path + "` of `" + source.repository() +
                          "` is not among the files mlenv.lock pins",
                      "run `mlenvc get` to fetch it"};
  }
  return GitFile{it->second, locked->commit,
                 in_folder(cache_folder(locked->url, locked->commit) + "/" + source.path)};
}

}  // namespace mlenv::check
