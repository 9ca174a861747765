#pragma once
// What the providers of OpenShift and Kubernetes share: the Kubernetes API's change semantics
// (replace_rules.h), the apply driver that runs oc or kubectl (kube_apply.h) and the day-2
// driver on the env's pods (day2/driver.h). Each platform adds its platform and renderer.

#include <map>
#include <optional>
#include <string>

#include "platforms/kube/apply/steps.h"
#include "platforms/provider.h"

namespace mlenv::platforms {

class KubeProvider : public Provider {
 public:
  bool is_run_kind(std::string_view kind) const override;
  std::string replace_reason(std::string_view kind, std::string_view path,
                             const std::map<std::string, std::string>& object) const override;
  /// Nothing: every change of a kube env is a change of one of its objects.
  void diff_unit(const plan::PlanTree& before, const plan::PlanTree& after, const std::string& unit,
                 const std::vector<std::string>& paths, plan::PlanDiff& diff) const override;
  const plan::ApplyDriver& apply() const override;
  /// The step that makes the image of the plan.json `build` action of `env` (a build in the
  /// cluster: OpenShift's, platforms/openshift/image_build.h), building when `rebuild`;
  /// nullopt where the platform has no such build (Kubernetes pushes: `push`).
  virtual std::optional<plan::Step> build_step(const plan::PlanAction&, const plan::EnvPlan&,
                                               bool) const {
    return std::nullopt;
  }
  const plan::day2::Day2Driver& day2() const override;
};

}  // namespace mlenv::platforms
