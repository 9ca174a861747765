#include "platforms/openshift/openshift_provider.h"

#include "platforms/common/plan_json.h"
#include "platforms/kube/kube_provider.h"
#include "platforms/openshift/openshift_target.h"

namespace mlenv::platforms {
namespace {

class OpenShiftProvider : public KubeProvider {
 public:
  ir::Platform platform() const override { return ir::Platform::openshift; }
  const target::Target& target() const override { return target_; }

  // Plans written before `actions`: OpenShift's, each BuildConfig started (no digest to read)
  // before kube's rollout waits.
  void add_implied_actions(const plan::PlanObject& object,
                           std::vector<plan::PlanAction>& actions) const override {
    if (object.kind == "BuildConfig") {
      plan::PlanAction build;
      build.action = "build";
      build.after = object.address;
      build.build_config = object.name;
      actions.push_back(std::move(build));
    }
    KubeProvider::add_implied_actions(object, actions);
  }

 private:
  target::openshift::OpenShiftTarget target_;
};

}  // namespace

const Provider& openshift_provider() {
  static const OpenShiftProvider provider;
  return provider;
}

}  // namespace mlenv::platforms
