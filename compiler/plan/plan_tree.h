#pragma once
// A rendered plan as data: file paths relative to the plan directory, mapped to blob ids and,
// where already in memory, bytes. Old plans come from git lazily; fresh ones from a target.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/plan/blob_id.h"
#include "targets/target.h"

namespace mlenv::plan {

/// One file of a plan: its id always, its bytes when they are in memory.
struct PlanEntry {
  BlobId id{};
  std::optional<std::string> bytes;
};

/// Files of a plan by path (`<cluster>/<env>/statefulset.yaml`, `<cluster>/_admin/scc.yaml`).
class PlanTree {
 public:
  /// Reads the bytes of a blob that is not in memory (from git); may throw std::runtime_error.
  using Loader = std::function<std::string(const BlobId&)>;

  PlanTree() = default;
  explicit PlanTree(Loader loader) : loader_(std::move(loader)) {}

  /// Adds a file whose bytes are known; its id is computed.
  void add(std::string path, std::string bytes);
  /// ... whose id the caller already has.
  void add(std::string path, std::string bytes, const BlobId& id);
  /// Adds a file known only by id; its bytes come from the loader when asked for.
  void add_id(std::string path, const BlobId& id);
  void erase(const std::string& path) { entries_.erase(path); }

  const std::map<std::string, PlanEntry>& entries() const { return entries_; }
  const PlanEntry* find(const std::string& path) const;
  /// The bytes of `path` (loaded on demand), or nullopt when the tree has no such file.
  std::optional<std::string> read(const std::string& path) const;
  const Loader& loader() const { return loader_; }

 private:
  std::map<std::string, PlanEntry> entries_;
  Loader loader_;
};

/// The files a target rendered, as a plan tree.
PlanTree tree_from_output(const target::Output& output);
/// ... from the files themselves, taking their bytes without a copy.
PlanTree tree_from_files(std::vector<target::File> files);

/// The unit a path belongs to: its first two segments (`<cluster>/<env>` or `<cluster>/_admin`),
/// or "" for a path with fewer than three segments or under a shared top-level directory
/// whose name starts with `_` (`_runtime/`, the mlenv-boot sources every env's image builds).
std::string_view unit_of(std::string_view path);

/// True for the cluster-scoped directory `<cluster>/_admin`.
bool is_admin_unit(std::string_view unit);

/// The units of a tree, sorted.
std::vector<std::string> units_of(const PlanTree& tree);

}  // namespace mlenv::plan
