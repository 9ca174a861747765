// The one list of platforms: each line is a provider (targets/README.md, "Adding a
// platform"). Nothing else in mlenvc names a platform.

#include <stdexcept>

#include "targets/kubernetes/kubernetes_provider.h"
#include "targets/local/local_provider.h"
#include "targets/openshift/openshift_provider.h"
#include "targets/provider.h"
#include "targets/slurm/slurm_provider.h"

namespace mlenv::target {

const std::vector<const Provider*>& providers() {
  static const std::vector<const Provider*> all = {
      &openshift_provider(),
      &kubernetes_provider(),
      &slurm_provider(),
      &local_provider(),
  };
  return all;
}

const std::vector<const check::PlatformRules*>& check_rules() {
  static const std::vector<const check::PlatformRules*> all = [] {
    std::vector<const check::PlatformRules*> rules;
    for (const Provider* one : providers()) rules.push_back(&one->rules());
    return rules;
  }();
  return all;
}

const Provider& provider(ir::Platform platform) {
  for (const Provider* one : providers()) {
    if (one->platform() == platform) return *one;
  }
  throw std::logic_error("no provider of platform " + std::string(ir::platform_name(platform)));
}

std::vector<openapi::AdmissionRules> admission_rules() {
  std::vector<openapi::AdmissionRules> rules;
  for (const Provider* one : providers()) {
    if (openapi::AdmissionRules own = one->admission_rules()) rules.push_back(own);
  }
  return rules;
}

bool is_image_kind(std::string_view kind) {
  for (const Provider* one : providers()) {
    if (one->is_image_kind(kind)) return true;
  }
  return false;
}

}  // namespace mlenv::target
