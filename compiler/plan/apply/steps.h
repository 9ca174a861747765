#pragma once
// What `mlenvc apply` runs for one env, as data: server-side apply of every object in plan
// order, the build and the rollout waits, replacements and the safe prune. Pure, so every rule
// is tested without a cluster.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/diag/diagnostic.h"
#include "compiler/plan/plan_json.h"
#include "compiler/plan/plan_tree.h"

namespace mlenv::plan {

/// Which program a step runs.
enum class Client { Kubectl, Oc };

/// One command: arguments after the program, its stdin, and how to show that stdin.
struct Step {
  Client client = Client::Kubectl;  ///< Oc only for `start-build`
  std::vector<std::string> args;
  std::string input;       ///< JSON object(s) on stdin, "" for none
  std::string input_from;  ///< the committed file the input comes from, for dry runs
  bool waits = false;      ///< a build or rollout: subject to --timeout
};

/// One committed env plan and what was last applied of it.
struct EnvPlan {
  std::string unit;  ///< `<cluster>/<env>`
  std::string dir;   ///< the env directory relative to the work tree (`plans/barcelona/ml-dev-env`)
  PlanManifest manifest;
  PlanTree files;  ///< committed files, paths relative to the work tree (with `_admin` ones)
  std::optional<BlobId> applied_commit;  ///< where `refs/mlenv/applied/<unit>` pointed at load
  std::optional<PlanManifest> applied;   ///< plan.json of that record
  PlanTree applied_files;                ///< its files, paths relative to the work tree as `dir`
};

/// Options that shape the steps.
struct StepOptions {
  std::string timeout = "30m";
  std::set<std::string> allow_destroy;  ///< addresses the operator allows to be deleted
  /// `<namespace>/<Kind>/<name>` of every shared object (PlanObject::shared) in the plan of an
  /// env being applied: an env whose plan drops one leaves it to the envs that keep it.
  std::set<std::string> shared_in_use;
};

/// The key of a shared object in StepOptions::shared_in_use.
std::string shared_key(const PlanObject& object);

/// The steps of one env, in order: admin objects, the ApplySet parent, each object (with a
/// delete first when it must be replaced, the build after its BuildConfig, the rollout wait
/// after its StatefulSet), then the prune of objects that left the plan, newest order first.
/// Reports E0704 for protected objects that would be deleted without --allow-destroy and
/// E0607 for unreadable objects; adds the addresses it deletes to `destroyed`.
std::optional<std::vector<Step>> plan_steps(const EnvPlan& env, const StepOptions& options,
                                            std::set<std::string>& destroyed,
                                            Diagnostics& diagnostics);

/// The resource name kubectl resolves without discovery ("statefulsets.apps").
std::string resource_name(const std::string& api_version, const std::string& kind);

}  // namespace mlenv::plan
