#include "targets/target.h"

#include "targets/openshift/openshift_target.h"

namespace mlenv::target {

std::unique_ptr<Target> make_target(std::string_view name) {
  if (name == "openshift") return std::make_unique<openshift::OpenShiftTarget>();
  return nullptr;
}

}  // namespace mlenv::target
