#pragma once
// What the providers of OpenShift and Kubernetes share: the Kubernetes API's change semantics
// (replace_rules.h), the apply driver that runs oc or kubectl (kube_apply.h) and the day-2
// driver on the env's pods (day2/driver.h). Each platform adds its platform and renderer.

#include <map>
#include <string>

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
  /// A rollout wait after each StatefulSet, as apply always did.
  void add_implied_actions(const plan::PlanObject& object,
                           std::vector<plan::PlanAction>& actions) const override;
  const plan::ApplyDriver& apply() const override;
  const plan::day2::Day2Driver& day2() const override;
};

}  // namespace mlenv::platforms
