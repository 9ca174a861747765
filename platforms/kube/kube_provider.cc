#include "platforms/kube/kube_provider.h"

#include "platforms/kube/day2/driver.h"
#include "platforms/kube/kube_apply.h"
#include "platforms/kube/replace_rules.h"

namespace mlenv::platforms {

bool KubeProvider::is_run_kind(std::string_view kind) const {
  return plan::is_run_kind(kind);
}

std::string KubeProvider::replace_reason(std::string_view kind, std::string_view path,
                                         const std::map<std::string, std::string>&) const {
  return plan::replace_reason(kind, path);
}

void KubeProvider::diff_unit(const plan::PlanTree&, const plan::PlanTree&, const std::string&,
                             const std::vector<std::string>&, plan::PlanDiff&) const {}

const plan::ApplyDriver& KubeProvider::apply() const {
  static const plan::KubeApplyDriver driver;
  return driver;
}

const plan::day2::Day2Driver& KubeProvider::day2() const {
  static const plan::day2::KubeDay2Driver driver;
  return driver;
}

}  // namespace mlenv::platforms
