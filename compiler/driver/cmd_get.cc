// `mlenvc get [--update] [SOURCE...] [FILE...]`: fetch every git import of the files
// (transitively), fill the cache `.mlenv/` beside them and write mlenv.lock.

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>

#include "compiler/base/atomic_file.h"
#include "compiler/base/limits.h"
#include "compiler/base/sha256.h"
#include "compiler/base/user_cache.h"
#include "compiler/check/git_imports.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"
#include "compiler/driver/pipeline.h"
#include "compiler/plan/git_repo.h"

namespace mlenv::driver {
namespace {
namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: mlenvc get [--update] [SOURCE...] [FILE...]\n"
    "\n"
    "Fetches every git import of the FILEs (default: every .mlenv file of the current\n"
    "folder), and what those files import in turn, into the cache .mlenv/ beside them (which\n"
    "git ignores), and writes mlenv.lock there: each source's URL, the ref asked, the commit\n"
    "it resolved to and a SHA-256 of the files used. Commit mlenv.lock. Without --update a\n"
    "locked source stays at its commit (a tag that moved is an error); --update moves every\n"
    "source, or each SOURCE named (`git::URL` or `git::URL?ref=REF`), to what its ref names now.\n";

using SourceKey = std::pair<std::string, std::string>;  // url, ref

// What one source resolved to in this run, and the files the programs used from it.
struct Resolved {
  std::string commit;
  std::map<std::string, std::string> files;
};

// Writes `bytes` to `path` through a fresh temporary file (mkostemp: never one a repository
// planted, link or not) renamed over it.
void write_file(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::string error;
  if (!write_file_atomic(path.string(), bytes, 0644, error)) throw std::runtime_error(error);
}

// The cache folder, made first with the .gitignore that keeps git from ever listing it.
fs::path make_cache(const std::string& folder) {
  fs::path cache = fs::path(folder.empty() ? "." : folder) / check::kCacheFolder;
  if (!fs::exists(cache / ".gitignore"))
    write_file(cache / ".gitignore", "# mlenvc get's cache: never committed\n*\n");
  return cache;
}

// One spelling of a repository's URL, for its mirror: `file:///srv/./p/`, `file:///srv/p`
// and `/srv/p` are one local repository (libgit2 reads a `file://` URL as its path), and a
// trailing `/` names the same remote repository.
std::string mirror_key(const std::string& url) {
  std::string key = url;
  if (key.starts_with("file://")) key.erase(0, 7);
  if (key.starts_with("/")) return normalize_path(key);
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

// The bytes of the files under `folder`, links not followed.
std::uintmax_t bytes_under(const fs::path& folder) {
  std::uintmax_t total = 0;
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_regular_file(error)) total += it->file_size(error);
  }
  return total;
}

// Git imports read from fresh fetches of each repository, at the locked commit unless updated.
class FetchingGitFiles : public check::GitFiles {
 public:
  FetchingGitFiles(std::string folder, const check::LockFile& lock,
                   std::function<bool(const SourceKey&)> update)
      : folder_(std::move(folder)), lock_(lock), update_(std::move(update)) {}

  std::variant<check::GitFile, check::GitFailure> read(const GitSource& source) override {
    SourceKey key{source.url, source.ref};
    if (auto failed = failures_.find(key); failed != failures_.end()) return failed->second;
    auto it = resolved_.find(key);
    if (it == resolved_.end()) {
      std::variant<std::string, check::GitFailure> commit = resolve(source);
      if (auto* failure = std::get_if<check::GitFailure>(&commit)) return failures_[key] = *failure;
      it = resolved_.emplace(key, Resolved{std::get<std::string>(commit), {}}).first;
    }
    std::string error;
    std::optional<std::string> bytes =
        mirrors_.at(mirror_key(source.url))
            ->read_file(it->second.commit, source.path, limits::kMaxFileBytes, error);
    if (!bytes) {
      return check::GitFailure{Code::E0223,
                               "cannot read `" + source.path + "` of " + source.repository() +
                                   " at " + it->second.commit.substr(0, 7) + ": " + error,
                               "a git import reads only regular files of its repository"};
    }
    it->second.files[source.path] = *bytes;
    std::string cached = check::cache_folder(source.url, it->second.commit) + "/" + source.path;
    return check::GitFile{std::move(*bytes), it->second.commit,
                          folder_.empty() ? cached : folder_ + "/" + cached};
  }

  const std::map<SourceKey, Resolved>& resolved() const { return resolved_; }

 private:
  // The commit `source`'s ref resolves to: the locked one unless it is being updated.
  std::variant<std::string, check::GitFailure> resolve(const GitSource& source) {
    plan::Mirror* mirror = fetched(source.url);
    if (!mirror) return mirror_failures_.at(source.url);
    bool is_tag = false;
    std::optional<std::string> now = mirror->resolve(source.ref, is_tag);
    if (!now) {
      return check::GitFailure{
          Code::E0224, "`" + source.ref + "` names no tag, branch or commit of git::" + source.url,
          ""};
    }
    const check::LockedSource* locked = lock_.find(source.url, source.ref);
    if (!locked || update_({source.url, source.ref})) return *now;
    if (is_tag && *now != locked->commit) {
      return check::GitFailure{
          Code::E0225,
          "the tag `" + source.ref + "` of git::" + source.url + " moved: mlenv.lock pins " +
              locked->commit.substr(0, 12) + ", the repository now names " + now->substr(0, 12),
          "`mlenvc get --update " + source.repository() + "` accepts the new commit"};
    }
    // A branch keeps a commit it reached; a commit id names only itself. A lock naming any other
    // commit of the repository was kept as it was (issue 32).
    if (!is_tag && mirror->has_commit(locked->commit) && !mirror->reaches(*now, locked->commit)) {
      return check::GitFailure{
          Code::E0228,
          "mlenv.lock pins " + source.repository() + " to " + locked->commit.substr(0, 12) +
              ", a commit `" + source.ref + "` never reached (it names " + now->substr(0, 12) +
              "): the lock was edited",
          "`mlenvc get --update " + source.repository() + "` pins what the ref names now"};
    }
    if (!mirror->has_commit(locked->commit)) {
      return check::GitFailure{Code::E0224,
                               "the locked commit " + locked->commit.substr(0, 12) + " of " +
                                   source.repository() + " is no longer in the repository",
                               "`mlenvc get --update " + source.repository() +
                                   "` moves the lock to what the ref names now"};
    }
    if (std::optional<check::GitFailure> wrong = wrong_hash(*mirror, *locked)) return *wrong;
    return locked->commit;
  }

  // Why `locked`'s sha256 is not that of its files at its commit, or nullopt: a lock edited
  // with a matching edited cache passed check (issue 32), so get, which has the commit, checks.
  static std::optional<check::GitFailure> wrong_hash(const plan::Mirror& mirror,
                                                     const check::LockedSource& locked) {
    std::map<std::string, std::string> files;
    std::string error;
    for (const std::string& path : locked.files) {
      std::optional<std::string> bytes =
          mirror.read_file(locked.commit, path, limits::kMaxFileBytes, error);
      if (!bytes) break;
      files[path] = std::move(*bytes);
    }
    if (files.size() == locked.files.size() && check::files_sha256(files) == locked.sha256)
      return std::nullopt;
    std::string source = "git::" + locked.url + "?ref=" + locked.ref;
    return check::GitFailure{
        Code::E0227,
        "mlenv.lock's sha256 of " + source + " is not that of its files at the commit it pins, " +
            locked.commit.substr(0, 12) + ": the lock was edited after `mlenvc get` wrote it",
        "find out who edited it; `mlenvc get --update " + source +
            "` records the commit's own hash"};
  }

  // The mirror of `url`, fetched once per run and shared by every spelling of the URL;
  // nullptr after recording why not.
  plan::Mirror* fetched(const std::string& url) {
    std::string key = mirror_key(url);
    if (auto it = mirrors_.find(key); it != mirrors_.end()) return it->second.get();
    if (auto it = mirror_failures_.find(key); it != mirror_failures_.end()) {
      mirror_failures_[url] = it->second;
      return nullptr;
    }
    try {
      fs::path repos = make_cache(folder_) / "repos";
      fs::path dir = repos / (sha256_hex(key).substr(0, 16) + ".git");
      fs::create_directories(repos);
      // One limit for the cache as a whole, not per URL: four spellings of one repository
      // were four full mirrors (issue 32).
      std::uintmax_t held = bytes_under(repos);
      if (held >= limits::kMaxFetchBytes) {
        throw std::runtime_error("the cache's mirrors (`" + repos.string() + "`) hold " +
                                 std::to_string(held) + " bytes, over the limit of " +
                                 std::to_string(limits::kMaxFetchBytes) + "; remove them");
      }
      mirrors_[key] = plan::Mirror::fetch(dir.string(), url, limits::kMaxFetchBytes - held);
      return mirrors_[key].get();
    } catch (const std::exception& e) {
      mirror_failures_[key] = mirror_failures_[url] =
          check::GitFailure{Code::E0224, "cannot fetch git::" + url + ": " + e.what(), ""};
      return nullptr;
    }
  }

  std::string folder_;
  const check::LockFile& lock_;
  std::function<bool(const SourceKey&)> update_;
  std::map<std::string, std::unique_ptr<plan::Mirror>> mirrors_;
  std::map<std::string, check::GitFailure> mirror_failures_;
  std::map<SourceKey, check::GitFailure> failures_;
  std::map<SourceKey, Resolved> resolved_;
};

// Whether a diagnostic says an import could not be loaded: what get is about. The programs'
// other errors are `check`'s business.
bool import_failure(Code code) {
  return code == Code::E0201 || code == Code::E0202 || code == Code::E0104 || code == Code::E0220 ||
         code == Code::E0221 || code == Code::E0222 || code == Code::E0223 || code == Code::E0224 ||
         code == Code::E0225 || code == Code::E0226 || code == Code::E0227 || code == Code::E0228;
}

// Whether SOURCE (`git::URL` or `git::URL?ref=REF`) names `key`.
bool names(const std::string& source, const SourceKey& key) {
  std::string text = source.substr(5);
  return text == key.first || text == key.first + "?ref=" + key.second;
}

// Fills `<folder>/.mlenv/git/<key>/<commit>` with each resolved source's files (the whole
// folder replaced), removes cached commits the lock no longer names, and makes git ignore
// the cache.
void write_cache(const fs::path& folder, const check::LockFile& lock,
                 const std::map<SourceKey, Resolved>& resolved) {
  fs::path cache = make_cache(folder.string());
  // Refs of one URL that resolve to the same commit share its folder: written together.
  std::map<fs::path, std::map<std::string, std::string>> by_folder;
  for (const auto& [key, source] : resolved) {
    by_folder[folder / check::cache_folder(key.first, source.commit)].insert(source.files.begin(),
                                                                             source.files.end());
  }
  for (const auto& [target, files] : by_folder) {
    fs::path temporary = target;
    temporary += ".tmp-" + std::to_string(::getpid());
    fs::remove_all(temporary);
    for (const auto& [path, bytes] : files) write_file(temporary / path, bytes);
    fs::remove_all(target);
    fs::rename(temporary, target);
  }
  std::set<fs::path> kept;
  for (const check::LockedSource& s : lock.sources)
    kept.insert(folder / check::cache_folder(s.url, s.commit));
  std::error_code ignored;
  for (const auto& key_dir : fs::directory_iterator(cache / "git", ignored)) {
    if (key_dir.is_symlink()) continue;  // never walked into (foreign_cache refuses it)
    for (const auto& commit_dir : fs::directory_iterator(key_dir.path(), ignored)) {
      if (!kept.count(commit_dir.path())) fs::remove_all(commit_dir.path(), ignored);
    }
  }
}

// The new lock: each resolved source with the files used, and, when FILEs were named, the
// old entries these files did not reach (other files of the folder may use them).
check::LockFile merge(const check::LockFile& old, const std::map<SourceKey, Resolved>& resolved,
                      bool keep_unreached) {
  check::LockFile lock;
  for (const auto& [key, source] : resolved) {
    check::LockedSource& entry = lock.sources.emplace_back();
    entry.url = key.first;
    entry.ref = key.second;
    entry.commit = source.commit;
    entry.sha256 = check::files_sha256(source.files);
    for (const auto& [path, bytes] : source.files) entry.files.push_back(path);
  }
  if (keep_unreached) {
    for (const check::LockedSource& s : old.sources) {
      if (!resolved.count({s.url, s.ref})) lock.sources.push_back(s);
    }
  }
  return lock;
}

void print_changes(const check::LockFile& old, const check::LockFile& lock) {
  for (const check::LockedSource& s : lock.sources) {
    const check::LockedSource* before = old.find(s.url, s.ref);
    std::cout << "  git::" << printable(s.url) << "?ref=" << printable(s.ref) << "  "
              << s.commit.substr(0, 12) << "  " << s.files.size()
              << (s.files.size() == 1 ? " file" : " files");
    if (!before) {
      std::cout << "  (new)";
    } else if (before->commit != s.commit) {
      std::cout << "  (was " << before->commit.substr(0, 12) << ")";
    } else if (before->files == s.files && before->sha256 != s.sha256) {
      // Only --update gets here (without it get refuses, E0227): never rewritten silently.
      std::cout << "  (the locked sha256 was not the commit's: corrected)";
    }
    std::cout << '\n';
  }
  for (const check::LockedSource& s : old.sources) {
    if (!lock.find(s.url, s.ref))
      std::cout << "  git::" << printable(s.url) << "?ref=" << printable(s.ref) << "  removed\n";
  }
}

// Whether each source `old` locks at a commit still has the hash mlenv.lock records, where
// its commit and files are unchanged. A different hash of the same files at the same commit
// means the lock was edited (a merge resolved by hand) or the repository rewrote the commit:
// mlenv.lock, not the cache, disagrees with the commit, and get never rewrites the pinned hash
// unless --update names the source. Says so for each.
bool pinned_hashes_hold(const check::LockFile& old, const check::LockFile& lock,
                        const std::function<bool(const SourceKey&)>& updating) {
  bool hold = true;
  for (const check::LockedSource& s : lock.sources) {
    const check::LockedSource* before = old.find(s.url, s.ref);
    if (!before || before->commit != s.commit || before->files != s.files ||
        before->sha256 == s.sha256 || updating({s.url, s.ref}))
      continue;
    const std::string source = "git::" + printable(s.url) + "?ref=" + printable(s.ref);
    std::cerr << "mlenvc get: mlenv.lock pins sha256 " << printable(before->sha256.substr(0, 12))
              << " for " << source << " at " << s.commit.substr(0, 12)
              << ", but the files it lists hash to " << s.sha256.substr(0, 12)
              << " at that commit: the lock disagrees with the commit (edited by hand, or a "
                 "merge resolved wrongly? `git log -p mlenv.lock`), not the cache.\n"
              << "  If that commit is the one you want, `mlenvc get --update " << source
              << "` pins what it holds.\n";
    hold = false;
  }
  return hold;
}

// The root files: those named, or every .mlenv file of the current folder.
std::vector<std::string> root_files(const std::vector<std::string>& named) {
  if (!named.empty()) return named;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(".")) {
    if (entry.is_regular_file() && entry.path().extension() == ".mlenv")
      files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int run_get(const Args& args) {
  Options options = parse_options(args, {"help", "h", "update"}, {});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  std::vector<std::string> sources, named;
  for (const std::string& arg : options.positional)
    (is_git_source(arg) ? sources : named).push_back(arg);
  if (!options.error.empty() || (!sources.empty() && !options.flag("update"))) {
    std::cerr << "mlenvc get: "
              << (options.error.empty() ? "a SOURCE is named only with --update" : options.error)
              << '\n'
              << kUsage;
    return 1;
  }
  std::vector<std::string> files = root_files(named);
  if (files.empty()) {
    std::cerr << "mlenvc get: no .mlenv file in the current folder; name the FILEs\n";
    return 1;
  }
  std::string folder = parent_path(files[0]);
  for (const std::string& file : files) {
    if (parent_path(file) != folder) {
      std::cerr << "mlenvc get: the FILEs share one mlenv.lock, so they must be in one folder; "
                   "run get once per folder\n";
      return 1;
    }
  }
  fs::path lock_path = fs::path(folder.empty() ? "." : folder) / check::kLockFileName;
  // Before anything is written: a link there would redirect get's writes and deletions.
  if (std::optional<std::string> foreign = foreign_cache(folder)) {
    std::cerr << "mlenvc get: error[E0226]: " << printable(*foreign) << '\n';
    return 1;
  }
  DiskFileSystem disk;
  check::LockFile old;
  std::string error;
  // As check reads it: a lock that links out of the repository is not read.
  if (std::optional<std::string> text =
          disk.read_inside(lock_path.string(), program_folders(files[0], {}), error)) {
    std::optional<check::LockFile> parsed = check::parse_lock_file(*text, error);
    if (!parsed) {
      std::cerr << "mlenvc get: " << lock_path.string()
                << " is not a lock file mlenvc wrote: " << error << "; remove it to start over\n";
      return 1;
    }
    old = std::move(*parsed);
  }
  bool update_all = options.flag("update") && sources.empty();
  std::set<std::string> unused(sources.begin(), sources.end());
  FetchingGitFiles git(folder, old, [&](const SourceKey& key) {
    bool named_here = false;
    for (const std::string& source : sources) {
      if (names(source, key)) {
        unused.erase(source);
        named_here = true;
      }
    }
    return update_all || named_here;
  });
  bool failed = false;
  for (const std::string& file : files) {
    std::unique_ptr<Compilation> compilation = compile(file, disk, &git);
    for (const Diagnostic& d : compilation->diagnostics.all()) {
      if (d.severity == Severity::Error && import_failure(d.code)) {
        failed = true;
        render_text(std::cerr, compilation->sources, d,
                    ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr);
        std::cerr << '\n';
      }
    }
  }
  for (const std::string& source : unused) {
    std::cerr << "mlenvc get: " << printable(source) << " names no git source of these files\n";
    failed = true;
  }
  if (failed) {
    std::cerr << "mlenvc get: mlenv.lock unchanged\n";
    return 1;
  }
  check::LockFile lock = merge(old, git.resolved(), !named.empty());
  auto updating = [&](const SourceKey& key) {
    return update_all || std::any_of(sources.begin(), sources.end(),
                                     [&](const std::string& s) { return names(s, key); });
  };
  if (!pinned_hashes_hold(old, lock, updating)) {
    std::cerr << "mlenvc get: mlenv.lock unchanged\n";
    return 1;
  }
  if (lock.sources.empty() && !fs::exists(lock_path)) {
    std::cout << "No git imports: nothing to lock.\n";
    return 0;
  }
  try {
    fs::path base = folder.empty() ? fs::path(".") : fs::path(folder);
    write_cache(base, lock, git.resolved());
    std::string text = check::write_lock_file(lock);
    std::optional<std::string> before = disk.read(lock_path.string(), error);
    if (!before || *before != text) write_file(lock_path, text);
    print_changes(old, lock);
    std::cout << (before && *before == text
                      ? "mlenv.lock is up to date.\n"
                      : "Wrote " + lock_path.lexically_normal().string() + ".\n");
  } catch (const std::exception& e) {
    std::cerr << "mlenvc get: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

}  // namespace mlenv::driver
