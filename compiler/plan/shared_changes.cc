#include "compiler/plan/shared_changes.h"

#include <algorithm>
#include <map>

namespace mlenv::plan {
namespace {

// The segments `<cluster>`, `<env>` and the rest of an address or path.
struct Split {
  std::string cluster;
  std::string env;
  std::string rest;
};

Split split(const std::string& text) {
  std::size_t first = text.find('/');
  std::size_t second = text.find('/', first + 1);
  return {text.substr(0, first), text.substr(first + 1, second - first - 1),
          text.substr(second + 1)};
}

// Whether any env directory of `cluster` in `tree` holds the file `name`.
bool held(const PlanTree& tree, const std::string& cluster, const std::string& name) {
  const std::string prefix = cluster + "/";
  for (auto it = tree.entries().lower_bound(prefix);
       it != tree.entries().end() && it->first.starts_with(prefix); ++it) {
    Split path = split(it->first);
    if (path.env != "_admin" && path.rest == name) return true;
  }
  return false;
}

}  // namespace

std::string shared_address(const std::string& env_address) {
  Split address = split(env_address);
  return address.cluster + "/_shared/" + address.rest;
}

void collapse_shared(const PlanTree& before, const PlanTree& after, const PlanTree& others,
                     PlanDiff& diff) {
  std::vector<Change> kept;
  std::map<std::string, std::vector<Change>> groups;  // by shared address
  for (Change& change : diff.changes) {
    if (change.shared) {
      groups[shared_address(change.address)].push_back(std::move(change));
    } else {
      kept.push_back(std::move(change));
    }
  }
  for (auto& [address, copies] : groups) {
    Split file = split(copies.front().file);
    const bool existed =
        held(before, file.cluster, file.rest) || held(others, file.cluster, file.rest);
    const bool exists =
        held(after, file.cluster, file.rest) || held(others, file.cluster, file.rest);
    const Change* shown = nullptr;
    for (const Change& copy : copies) {
      if (shown == nullptr && (copy.action == Action::Update || copy.action == Action::Replace))
        shown = &copy;
    }
    for (const Change& copy : copies) {
      if (shown != nullptr) break;
      // The last env that held it left: deleted, or kept (a claim keeps its data).
      if ((!existed && copy.action == Action::Create) ||
          (!exists && (copy.action == Action::Delete || copy.action == Action::Keep)))
        shown = &copy;
    }
    if (shown == nullptr) {  // copies came or went with envs; the object stays as it was
      diff.shared_copies += copies.size();
      continue;
    }
    Change change = *shown;
    change.address = address;
    kept.push_back(std::move(change));
  }
  std::sort(kept.begin(), kept.end(),
            [](const Change& x, const Change& y) { return x.address < y.address; });
  diff.changes = std::move(kept);
}

}  // namespace mlenv::plan
