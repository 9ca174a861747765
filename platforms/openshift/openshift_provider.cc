#include "platforms/openshift/openshift_provider.h"

#include "platforms/kube/kube_provider.h"
#include "platforms/openshift/field_rules.h"
#include "platforms/openshift/openshift_target.h"

namespace mlenv::platforms {
namespace {

class OpenShiftProvider : public KubeProvider {
 public:
  ir::Platform platform() const override { return ir::Platform::openshift; }
  const target::Target& target() const override { return target_; }
  const check::PlatformRules& rules() const override { return openshift_rules(); }

 private:
  target::openshift::OpenShiftTarget target_;
};

}  // namespace

const Provider& openshift_provider() {
  static const OpenShiftProvider provider;
  return provider;
}

}  // namespace mlenv::platforms
