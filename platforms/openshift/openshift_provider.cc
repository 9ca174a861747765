#include "platforms/openshift/openshift_provider.h"

#include "platforms/kube/kube_provider.h"
#include "platforms/openshift/image_build.h"
#include "platforms/openshift/openshift_target.h"

namespace mlenv::platforms {
namespace {

class OpenShiftProvider : public KubeProvider {
 public:
  ir::Platform platform() const override { return ir::Platform::openshift; }
  const target::Target& target() const override { return target_; }
  bool is_image_kind(std::string_view kind) const override {
    return openshift::is_image_kind(kind);
  }
  std::optional<plan::Step> build_step(const plan::PlanAction& action, const plan::EnvPlan& env,
                                       bool rebuild) const override {
    return openshift::build_step(action, env, rebuild);
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
