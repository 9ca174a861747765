#include "compiler/plan/plan_tree.h"

#include <stdexcept>

#include "compiler/base/parallel.h"

namespace mlenv::plan {

void PlanTree::add(std::string path, std::string bytes) {
  BlobId id = hash_blob(bytes);
  add(std::move(path), std::move(bytes), id);
}

void PlanTree::add(std::string path, std::string bytes, const BlobId& id) {
  PlanEntry entry;
  entry.id = id;
  entry.bytes = std::move(bytes);
  entries_[std::move(path)] = std::move(entry);
}

void PlanTree::add_id(std::string path, const BlobId& id) {
  PlanEntry entry;
  entry.id = id;
  entries_[std::move(path)] = std::move(entry);
}

const PlanEntry* PlanTree::find(const std::string& path) const {
  auto it = entries_.find(path);
  return it == entries_.end() ? nullptr : &it->second;
}

std::optional<std::string> PlanTree::read(const std::string& path) const {
  const PlanEntry* entry = find(path);
  if (entry == nullptr) return std::nullopt;
  if (entry->bytes) return entry->bytes;
  if (!loader_) throw std::runtime_error("no loader for plan file " + path);
  return loader_(entry->id);
}

PlanTree tree_from_files(std::vector<target::File> files) {
  // Hashing is most of the work (a fleet's plan is tens of megabytes): on every core.
  std::vector<BlobId> ids(files.size());
  parallel_for(ids.size(), [&](std::size_t i) { ids[i] = hash_blob(files[i].content); });
  PlanTree tree;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    tree.add(std::move(files[i].path), std::move(files[i].content), ids[i]);
  }
  return tree;
}

PlanTree tree_from_output(const target::Output& output) {
  return tree_from_files(output.files);
}

std::string_view unit_of(std::string_view path) {
  if (path.starts_with("_")) return {};  // shared across clusters (`_runtime/`)
  std::size_t first = path.find('/');
  if (first == std::string_view::npos) return {};
  std::size_t second = path.find('/', first + 1);
  if (second == std::string_view::npos) return {};
  return path.substr(0, second);
}

bool is_admin_unit(std::string_view unit) {
  return unit.size() > 7 && unit.substr(unit.size() - 7) == "/_admin";
}

std::vector<std::string> units_of(const PlanTree& tree) {
  std::vector<std::string> units;
  for (const auto& [path, entry] : tree.entries()) {
    std::string_view unit = unit_of(path);
    if (unit.empty()) continue;
    if (units.empty() || units.back() != unit) units.emplace_back(unit);
  }
  return units;
}

}  // namespace mlenv::plan
