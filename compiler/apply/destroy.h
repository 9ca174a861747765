#pragma once
// Envs leaving the cluster: the envs a plan no longer holds (apply deletes what their last
// applied record applied) and `mlenvc destroy ENV` (the same, on purpose).

#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "compiler/apply/apply_session.h"
#include "compiler/apply/env_plan.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/plan/git_repo.h"

namespace mlenv::plan {

/// The envs recorded as applied (`refs/mlenv/applied[-admin]/<cluster>/<env>`, not yet
/// destroyed) from a plan directory under one of `covered` (relative to the work tree) that
/// HEAD no longer holds, except the units in `applying`; each with its record loaded
/// (`applied`, and `manifest` set to the applied plan.json).
std::vector<EnvPlan> removed_envs(Repository& repo, const std::optional<ObjectId>& head_tree,
                                  const std::vector<std::string>& covered,
                                  const std::set<std::string>& applying, bool admin);

/// The shared objects (shared_key) of `env`'s record that another env directory of its
/// cluster holds at HEAD: they stay for that env.
std::set<std::string> shared_kept_at_head(Repository& repo,
                                          const std::optional<ObjectId>& head_tree,
                                          const EnvPlan& env);

/// `mlenvc destroy ENV`.
struct DestroyRequest {
  std::string env;      ///< `ENV` or `CLUSTER/ENV`
  std::string client;   ///< --kubectl PATH; "" for the platform's client on PATH (platform_client)
  std::string context;  ///< --context NAME, as ApplyRequest::context
  bool dry_run = false;
  StepOptions steps;  ///< timeout, allow_destroy
};

/// Deletes the objects `request.env`'s applied record lists, in reverse apply order (claims and
/// shared objects only with --allow-destroy; shared objects another env holds never), then
/// records the env as destroyed. Returns the exit status (0 done or printed, 1 refused or
/// failed, with diagnostics reported).
int destroy_env(const DestroyRequest& request, std::ostream& out, Diagnostics& diagnostics);

}  // namespace mlenv::plan
