#pragma once
// The Kubernetes target (`platform = kubernetes`): runs are JobSets admitted by Kueue, dev envs
// StatefulSets, images built from the emitted Dockerfile and pushed to `image.registry`, tools
// reached with `kubectl port-forward`. Nothing OpenShift-only (targets/openshift/).

#include "targets/common/env_layout.h"
#include "targets/common/object.h"
#include "targets/target.h"

namespace mlenv::target::kubernetes {

class KubernetesTarget : public Target {
 public:
  std::string_view name() const override { return ir::platform_name(ir::Platform::kubernetes); }
  Output render(const ir::Program& program, Diagnostics& diagnostics, Scope scope) const override;
  std::vector<std::string> check(const ir::Program& program,
                                 Diagnostics& diagnostics) const override;
  std::vector<std::string> stream(const ir::Program& program, Diagnostics& diagnostics,
                                  const ObjectSink& write) const override;
};

/// The image the env runs: `<image.registry>/<env>:<image.tag>`.
std::string registry_image(const EnvLayout& layout);

/// The objects of one env in apply order; `boot_json` is its bootstrap config.
std::vector<Object> env_objects(const EnvLayout& layout, const std::string& boot_json);

}  // namespace mlenv::target::kubernetes
