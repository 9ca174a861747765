#include "compiler/plan/change.h"

#include <algorithm>

namespace mlenv::plan {

std::size_t PlanDiff::count(Action action) const {
  return static_cast<std::size_t>(std::count_if(
      changes.begin(), changes.end(), [&](const Change& c) { return c.action == action; }));
}

const char* action_name(Action action) {
  switch (action) {
    case Action::Create:
      return "create";
    case Action::Update:
      return "update";
    case Action::Replace:
      return "replace";
    case Action::Delete:
      return "delete";
  }
  return "update";
}

bool holds_data(const std::string& kind) {
  return kind == "PersistentVolumeClaim" || kind == "PersistentVolume" || kind == "Namespace";
}

}  // namespace mlenv::plan
