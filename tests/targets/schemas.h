#pragma once
// The upstream OpenAPI documents and CRDs kept in tests/schemas (see its README), loaded once per
// process.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "targets/common/openapi.h"
#include "targets/provider.h"

namespace mlenv::testing {

/// The validator for the Kubernetes, OpenShift and NetworkAttachmentDefinition schemas, or
/// nullptr with `why` saying which file is missing.
inline const openapi::Validator* shared_validator(std::string& why,
                                                  std::vector<std::string> more = {}) {
  std::string dir = std::string(MLENV_SCHEMAS_DIR) + "/";
  std::vector<std::string> paths = {dir + "kubernetes-openapi.json", dir + "openshift-openapi.json",
                                    dir + "network-attachment-definition-crd.yaml"};
  paths.insert(paths.end(), more.begin(), more.end());
  for (const std::string& p : paths) {
    if (!std::filesystem::exists(p)) {
      why = "schema file " + p + " is absent: run tests/schemas/refresh.sh";
      return nullptr;
    }
  }
  return openapi::cached_validator(paths, why, target::admission_rules());
}

/// The shared validator plus every CRD under tests/schemas/crds (JobSet, Kueue, Volcano),
/// or nullptr with `why` saying what is missing.
inline const openapi::Validator* crd_validator(std::string& why) {
  std::string dir = std::string(MLENV_SCHEMAS_DIR) + "/crds";
  std::vector<std::string> crds;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      crds.push_back(entry.path().string());
    }
  }
  if (crds.empty()) {
    why = "no CRDs under " + dir + ": run tests/schemas/refresh.sh";
    return nullptr;
  }
  std::sort(crds.begin(), crds.end());
  return shared_validator(why, std::move(crds));
}

}  // namespace mlenv::testing
