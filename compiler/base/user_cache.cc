#include "compiler/base/user_cache.h"

#include <dirent.h>
#include <git2.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

namespace mlenv {
namespace {

constexpr const char* kCache = ".mlenv";

// What `path` is, read without following a link: "" for a folder or an absent path.
std::string not_a_folder(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "";
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "not a folder";
  return "";
}

// The names in `folder` (none when it cannot be read); links are not followed by the caller.
std::vector<std::string> entries(const std::string& folder) {
  std::vector<std::string> names;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(folder.c_str()), ::closedir);
  if (!dir) return names;
  while (const dirent* entry = ::readdir(dir.get())) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  return names;
}

// The first link (or non-folder) among the folders get writes into and deletes under:
// `git/<key>/<commit>` is replaced whole, so `git` and each `<key>` are walked into.
std::optional<std::string> link_in_cache(const std::string& cache) {
  for (const std::string& path : {cache, cache + "/git", cache + "/repos"}) {
    if (std::string what = not_a_folder(path); !what.empty()) return "`" + path + "` is " + what;
  }
  struct stat st {};
  std::string ignore = cache + "/.gitignore";
  if (::lstat(ignore.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return "`" + ignore + "` is not a regular file";
  for (const std::string& sub : {std::string("/git"), std::string("/repos")}) {
    for (const std::string& name : entries(cache + sub)) {
      std::string path = cache + sub + "/" + name;
      if (std::string what = not_a_folder(path); !what.empty()) return "`" + path + "` is " + what;
    }
  }
  return std::nullopt;
}

std::string real_path(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

// Whether the git repository holding `folder` tracks `.mlenv` or anything under it. A
// repository that cannot be opened (none, or one libgit2 refuses) tracks nothing mlenv sees.
bool tracked_by_git(const std::string& folder) {
  static const int once = git_libgit2_init();
  (void)once;
  std::string real = real_path(folder.empty() ? "." : folder);
  git_repository* repo = nullptr;
  if (real.empty() || git_repository_open_ext(&repo, real.c_str(), 0, nullptr) != 0) return false;
  std::unique_ptr<git_repository, void (*)(git_repository*)> owned(repo, git_repository_free);
  const char* workdir = git_repository_workdir(repo);
  if (workdir == nullptr) return false;
  std::string relative = std::filesystem::path(real + "/" + kCache)
                             .lexically_relative(real_path(workdir))
                             .generic_string();
  if (relative.empty() || relative.starts_with("..")) return false;
  git_index* index = nullptr;
  if (git_repository_index(&index, repo) != 0) return false;
  std::unique_ptr<git_index, void (*)(git_index*)> owned_index(index, git_index_free);
  std::size_t at = 0;
  return git_index_get_bypath(index, relative.c_str(), 0) != nullptr ||
         git_index_find_prefix(&at, index, (relative + "/").c_str()) == 0;
}

}  // namespace

std::optional<std::string> foreign_cache(const std::string& folder) {
  std::string cache = folder.empty() ? kCache : folder + "/" + kCache;
  if (std::optional<std::string> link = link_in_cache(cache))
    return *link + ": the cache is the user's, made by `mlenvc get`, never a repository's";
  if (tracked_by_git(folder)) {
    return "git tracks `" + cache +
           "`: the cache is the user's, made by `mlenvc get`, never a repository's; remove it "
           "from the repository (`git rm -r --cached " +
           cache + "`)";
  }
  return std::nullopt;
}

}  // namespace mlenv
