#pragma once
// The apply driver of the platforms whose envs are Kubernetes objects (OpenShift and
// Kubernetes): each env's steps (steps.h) run through oc or kubectl (step_runner.h), then the
// env is recorded as applied or destroyed.

#include "compiler/apply/apply_driver.h"
#include "compiler/ir/program.h"

namespace mlenv::plan {

class KubeApplyDriver : public ApplyDriver {
 public:
  /// Every env's preflight first (Namespaces, grants), then each env's steps and record; the
  /// envs that left the plan after the envs applied.
  int apply(const ApplyContext& context, const std::vector<EnvPlan>& envs,
            const std::vector<EnvPlan>& removed, std::ostream& out,
            Diagnostics& diagnostics) const override;
  /// Deletes the objects of `env`'s record in reverse apply order, then records it destroyed.
  int destroy(const DestroyRequest& request, Repository& repo, const EnvPlan& env,
              std::ostream& out, Diagnostics& diagnostics) const override;
};

/// The cluster client on $PATH for a plan of `platform`: `oc` first on OpenShift, `kubectl`
/// first on any other; "" when neither is there. apply, destroy, results and the day-2
/// commands all choose with it.
std::string platform_client(ir::Platform platform);

}  // namespace mlenv::plan
