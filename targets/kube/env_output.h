#pragma once
// One env's output directory on a Kubernetes-based platform: every object as
// `<kind>-<name>.yaml` (cluster-scoped ones for `_admin/`), the target's other files, a
// kustomization.yaml listing the objects in apply order and plan.json (PLAN_JSON.md).

#include <string>
#include <utility>
#include <vector>

#include "targets/common/assembly.h"
#include "targets/common/plan_json.h"

namespace mlenv::target::kube {

/// A file of the env directory besides its objects, kustomization and plan (Dockerfile,
/// boot.json).
struct EnvFile {
  std::string name;
  std::string bytes;
};

/// The env's EnvOutput for `objects` (in apply order). With `tree`, also `files`, the
/// kustomization and plan.json with `steps`; without, only the objects (nothing is hashed).
EnvOutput env_output(const EnvLayout& layout, const std::vector<Object>& objects,
                     std::vector<EnvFile> files, const PlanActions& steps,
                     const PlanContext& context, bool tree);

/// The `_admin/` objects among `objects`, as env_output puts them in EnvOutput::admin.
std::vector<std::pair<std::string, File>> admin_output(const EnvLayout& layout,
                                                       const std::vector<Object>& objects);

}  // namespace mlenv::target::kube
