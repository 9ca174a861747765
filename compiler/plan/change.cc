#include "compiler/plan/change.h"

#include <algorithm>
#include <vector>

#include "targets/provider.h"

#include "targets/provider.h"

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
    case Action::Keep:
      return "keep";
  }
  return "update";
}

bool holds_data(const std::string& kind) {
  return kind == "PersistentVolumeClaim" || kind == "PersistentVolume" || kind == "Namespace";
}

bool grants_privileges(const std::string& kind) {
  const std::vector<const target::Provider*>& all = target::providers();
  return std::any_of(all.begin(), all.end(),
                     [&](const target::Provider* one) { return one->grants_privileges(kind); });
}

bool needs_allow_destroy(const std::string& kind, bool admin, bool shared) {
  // An image's shared objects go with the last env that runs the image (its build is named
  // after the image, never after a cluster), where another env keeps none of them.
  return holds_data(kind) || grants_privileges(kind) || admin ||
         (shared && !target::is_image_kind(kind));
}

bool kept_when_env_leaves(const std::string& kind, bool shared) {
  return kind == "PersistentVolumeClaim" || (shared && !target::is_image_kind(kind));
}

std::string allow_destroy_flag(const std::string& address) {
  return "--allow-destroy=" + address;
}

bool is_admin_address(const std::string& address) {
  const std::size_t first = address.find('/');
  return first != std::string::npos && address.compare(first, 8, "/_admin/") == 0;
}

std::string required_flag(const Change& change) {
  const bool deletes = change.action == Action::Delete || change.action == Action::Replace ||
                       change.action == Action::Keep;
  if (!deletes ||
      !needs_allow_destroy(change.kind, is_admin_address(change.address), change.shared))
    return "";
  return allow_destroy_flag(change.address);
}

}  // namespace mlenv::plan
