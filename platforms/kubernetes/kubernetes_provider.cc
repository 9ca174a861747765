#include "platforms/kubernetes/kubernetes_provider.h"

#include "platforms/kube/kube_provider.h"
#include "platforms/kubernetes/kubernetes_target.h"

namespace mlenv::platforms {
namespace {

class KubernetesProvider : public KubeProvider {
 public:
  ir::Platform platform() const override { return ir::Platform::kubernetes; }
  const target::Target& target() const override { return target_; }

 private:
  target::kubernetes::KubernetesTarget target_;
};

}  // namespace

const Provider& kubernetes_provider() {
  static const KubernetesProvider provider;
  return provider;
}

}  // namespace mlenv::platforms
