#pragma once
// One env's committed plan and its applied record, and the options of one apply: what apply
// and destroy hand every target's apply driver (apply_driver.h), whatever its platform.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/plan/plan_tree.h"
#include "targets/common/plan_json.h"

namespace mlenv::plan {

/// One committed env plan and what was last applied of it.
struct EnvPlan {
  std::string unit;  ///< `<cluster>/<env>`
  std::string dir;   ///< the env directory relative to the work tree (`plans/barcelona/ml-dev-env`)
  PlanManifest manifest;
  std::vector<PlanDigest> program_inputs;  ///< the program's `_inputs/` file at HEAD
  PlanTree files;  ///< committed files, paths relative to the work tree (with `_admin` ones)
  std::optional<BlobId> applied_commit;  ///< where `refs/mlenv/applied/<unit>` pointed at load
  std::optional<PlanManifest> applied;   ///< plan.json of that record
  PlanTree applied_files;                ///< its files, paths relative to the work tree as `dir`
  std::string plan_root;     ///< absolute path of the plan directory holding `<cluster>/<env>`
  std::string runtime_tree;  ///< id of `<plan_root>/_runtime` at HEAD, "" when none
  std::string applied_runtime_tree;  ///< the same, as recorded with the last apply
  /// The ApplySet parent named by the applied record (`applyset-<env>` for records written
  /// before parents named the program), whose id labels the objects that record applied.
  std::string applied_parent;
  /// The image the applied record's workloads ran, by digest (`<repository>@sha256:...`), where
  /// apply pushed one; "" when none.
  std::string applied_image;
  /// The applied record's message, whose trailers of its own a provider reads (raw_trailer).
  std::string record_message;
};

/// Options that shape the steps.
struct StepOptions {
  std::string timeout = "30m";
  bool admin = false;  ///< --admin: only the `admin` objects (the platform team's policies, grants)
  bool wait = false;   ///< --wait: wait for each run (`complete` action) to finish
  std::set<std::string> allow_destroy;  ///< addresses the operator allows to be deleted
  /// `<namespace>/<Kind>/<name>` of every shared object (PlanObject::shared) in the plan of an
  /// env being applied: an env whose plan drops one leaves it to the envs that keep it.
  std::set<std::string> shared_in_use;
};

/// The key of a shared object in StepOptions::shared_in_use.
std::string shared_key(const PlanObject& object);

}  // namespace mlenv::plan
