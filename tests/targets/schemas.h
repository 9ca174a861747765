#pragma once
// The shared OpenAPI documents beside the checkout (../shared/schemas), loaded once per process.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "platforms/openapi/openapi.h"

namespace mlenv::testing {

/// The validator for the Kubernetes, OpenShift and NetworkAttachmentDefinition schemas, or
/// nullptr with `why` saying which file is missing.
inline const openapi::Validator* shared_validator(std::string& why,
                                                  std::vector<std::string> more = {}) {
  std::string dir = std::string(MLENV_SHARED_DIR) + "/schemas/";
  std::vector<std::string> paths = {dir + "kubernetes-openapi.json", dir + "openshift-openapi.json",
                                    dir + "network-attachment-definition-crd.yaml"};
  paths.insert(paths.end(), more.begin(), more.end());
  for (const std::string& p : paths) {
    if (!std::filesystem::exists(p)) {
      why = "schema file " + p + " is absent: the shared schemas must lie beside the checkout";
      return nullptr;
    }
  }
  return openapi::cached_validator(paths, why);
}

/// The shared validator plus every CRD under ../shared/schemas/crds (JobSet, Kueue, Volcano),
/// or nullptr with `why` saying what is missing.
inline const openapi::Validator* crd_validator(std::string& why) {
  std::string dir = std::string(MLENV_SHARED_DIR) + "/schemas/crds";
  std::vector<std::string> crds;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      crds.push_back(entry.path().string());
    }
  }
  if (crds.empty()) {
    why = "no CRDs under " + dir + ": the shared schemas must lie beside the checkout";
    return nullptr;
  }
  std::sort(crds.begin(), crds.end());
  return shared_validator(why, std::move(crds));
}

}  // namespace mlenv::testing
