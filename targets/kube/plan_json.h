#pragma once
// plan.json (compiler/plan/PLAN_JSON.md, format version 1): the env's inventory, content
// hashes and input digests, shared by every target.

#include <string>
#include <vector>

#include "targets/common/env_layout.h"
#include "targets/common/object.h"
#include "targets/common/value.h"

namespace mlenv::target::kube {

/// An object as the plan records it: where it was written and the hash of its bytes.
struct PlannedObject {
  const Object* object = nullptr;
  std::string file;  ///< relative to the env directory
  std::string sha256;
};

/// A file of the env directory (other than plan.json) and the hash of its bytes.
struct PlannedFile {
  std::string path;
  std::string sha256;
};

/// The program-wide part of every plan.json.
struct PlanContext {
  std::string platform;  ///< the cluster's platform, "openshift" or "kubernetes"
  std::string source;    ///< the root .mlenv file as given to the compiler
  Value inputs;          ///< [{path, sha256}] sorted by path, computed once per program
};

/// What apply does for the env besides applying its objects, as data (PLAN_JSON.md): the
/// Secrets it creates when missing, the SCC grants it checks, and the actions after objects.
struct PlanSteps {
  Value secrets = Value::seq();  ///< [{name, key, random_bytes}]
  Value grants = Value::seq();   ///< [{scc, service_account}]
  Value actions = Value::seq();  ///< [{action, after, ...}] in apply order
};

/// The `inputs` array for `files` (sorted by path).
Value plan_inputs(const std::vector<ir::InputFile>& files);

/// plan.json for one env; `objects` in apply order, `files` sorted by path.
std::string plan_json(const EnvLayout& layout, const PlanContext& context,
                      const std::vector<PlannedObject>& objects,
                      const std::vector<PlannedFile>& files, const PlanSteps& steps);

}  // namespace mlenv::target::kube
