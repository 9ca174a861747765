#pragma once
// What a provider's apply driver does: apply (apply_session.h) loads the committed, fresh env
// plans and the envs that left the plan, and hands each driver those of its platforms; only
// the driver knows the platform's clients, steps and records.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/apply/apply_session.h"
#include "compiler/apply/destroy.h"
#include "compiler/apply/env_plan.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/plan/git_repo.h"

namespace mlenv::plan {

/// The repository state one apply loaded every env from.
struct ApplyContext {
  const ApplyRequest& request;
  Repository& repo;
  const Head& head;
  const std::optional<ObjectId>& head_tree;
  const std::string& workdir;  ///< the work tree, absolute
};

class ApplyDriver {
 public:
  virtual ~ApplyDriver() = default;
  /// Applies `envs` (committed and fresh) and takes `removed` (recorded, gone from the plan)
  /// off the cluster, recording each. Returns apply's exit status: 0, 1 (diagnostics reported)
  /// or kExitRunFailed. Prints no "Dry run" line: apply does, once.
  virtual int apply(const ApplyContext& context, const std::vector<EnvPlan>& envs,
                    const std::vector<EnvPlan>& removed, std::ostream& out,
                    Diagnostics& diagnostics) const = 0;
  /// `mlenvc destroy` of `env`, found by its applied record. Returns the exit status.
  virtual int destroy(const DestroyRequest& request, Repository& repo, const EnvPlan& env,
                      std::ostream& out, Diagnostics& diagnostics) const = 0;
};

}  // namespace mlenv::plan
