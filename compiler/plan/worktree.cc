#include "compiler/plan/worktree.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "compiler/base/atomic_file.h"

namespace mlenv::plan {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> read_file(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// True when the file at `path` already holds exactly `bytes` (size first, to skip most reads).
bool same_bytes(const fs::path& path, const std::string& bytes) {
  std::error_code error;
  auto size = fs::file_size(path, error);
  if (error || size != bytes.size()) return false;
  std::optional<std::string> current = read_file(path);
  return current && *current == bytes;
}

bool is_link(const fs::path& path) {
  std::error_code error;
  return fs::is_symlink(fs::symlink_status(path, error));
}

// Makes every directory between `root` and `target` a real directory: a symbolic link on the
// way (committed, or planted in the work tree) is removed, never followed, so the plan writes
// and deletes only inside the plan directory. `target` itself, when a link, is removed too.
void unlink_on_the_way(const fs::path& root, const fs::path& target) {
  fs::path at = root;
  for (const fs::path& part : target.lexically_relative(root)) {
    at /= part;
    if (is_link(at)) fs::remove(at);
  }
}

}  // namespace

std::vector<std::string> write_plan_files(
    const std::string& root, const PlanTree& tree, const std::vector<std::string>& removed,
    const std::function<bool(const std::string&)>& unchanged) {
  std::vector<std::string> touched;
  for (const auto& [path, entry] : tree.entries()) {
    if (unchanged && unchanged(path)) continue;
    fs::path target = fs::path(root) / path;
    std::optional<std::string> bytes = tree.read(path);
    unlink_on_the_way(root, target);
    if (same_bytes(target, *bytes)) continue;
    fs::create_directories(target.parent_path());
    // A new file renamed over the old one, as git checkout replaces files: a hard-linked copy
    // of the tree (a `cp -al` backup) keeps its bytes, and a full disk fails the write at its
    // close instead of leaving an empty boot.json that the index then records.
    std::string error;
    if (!write_file_atomic(target.string(), *bytes, 0644, error)) throw std::runtime_error(error);
    touched.push_back(path);
  }
  for (const std::string& path : removed) {
    fs::path target = fs::path(root) / path;
    std::error_code error;
    unlink_on_the_way(root, target.parent_path());
    if (fs::remove(target, error)) touched.push_back(path);
    for (fs::path dir = target.parent_path(); dir.string().size() > root.size();
         dir = dir.parent_path()) {
      if (!fs::is_directory(dir, error) || !fs::is_empty(dir, error)) break;
      fs::remove(dir, error);
    }
  }
  return touched;
}

std::vector<std::string> uncommitted_files(const std::string& root, const std::string& dir,
                                           const std::vector<std::string>& extra,
                                           const PlanTree& committed,
                                           const std::function<bool(const std::string&)>& ignored) {
  std::set<std::string> paths(extra.begin(), extra.end());
  for (const auto& [path, entry] : committed.entries()) {
    if (path.starts_with(dir + "/")) paths.insert(path);
  }
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(fs::path(root) / dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (!it->is_regular_file()) continue;
    std::string path = fs::relative(it->path(), root).generic_string();
    if (committed.find(path) == nullptr && ignored(path)) continue;
    paths.insert(std::move(path));
  }
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::optional<std::string> on_disk = read_file(fs::path(root) / path);
    const PlanEntry* entry = committed.find(path);
    if (!on_disk || entry == nullptr || hash_blob(*on_disk) != entry->id) out.push_back(path);
  }
  return out;
}

}  // namespace mlenv::plan
