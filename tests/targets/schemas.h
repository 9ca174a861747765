#pragma once
// The shared OpenAPI documents beside the checkout (../shared/schemas), loaded once per process.

#include <filesystem>
#include <string>
#include <vector>

#include "targets/openapi/openapi.h"

namespace mlenv::testing {

/// The validator for the Kubernetes, OpenShift and NetworkAttachmentDefinition schemas, or
/// nullptr with `why` saying which file is missing.
inline const openapi::Validator* shared_validator(std::string& why) {
  std::string dir = std::string(MLENV_SHARED_DIR) + "/schemas/";
  std::vector<std::string> paths = {dir + "kubernetes-openapi.json", dir + "openshift-openapi.json",
                                    dir + "network-attachment-definition-crd.yaml"};
  for (const std::string& p : paths) {
    if (!std::filesystem::exists(p)) {
      why = "schema file " + p + " is absent: the shared schemas must lie beside the checkout";
      return nullptr;
    }
  }
  return openapi::cached_validator(paths, why);
}

}  // namespace mlenv::testing
