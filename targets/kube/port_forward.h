#pragma once
// How a person reaches an env's tools from their machine: `kubectl port-forward` to the pod
// that runs them (pod 0 of a dev env, rank 0 of a run), for Kubernetes' tools (no Route) and
// debugpy on every platform (never routed). `mlenvc port-forward` runs it; builds print it.

#include <string>
#include <vector>

#include "targets/common/env_layout.h"
#include "targets/kube/run_workload.h"

namespace mlenv::target::kube {

/// Where to forward to, and which ports (each to the same local port).
struct PortForward {
  std::string pod;       ///< `pod/<env>-0` for a dev env; "" when `selector` finds the pod
  std::string selector;  ///< a run's rank 0 pod by labels (its name has a random suffix)
  std::vector<int> ports;
};

/// The forward for the env's `services` (all of them, and debugpy when the env debugs, when
/// `names` is empty; else those named, "debugpy" included), to rank 0's pod of the env's
/// StatefulSet or of its run, a workload of the platform's kind `run`. Unknown names are left
/// out.
PortForward port_forward(const EnvLayout& layout, const RunWorkload& run,
                         const std::vector<std::string>& names);

/// The command a person types: `kubectl port-forward -n NS POD P:P...`, with `$(kubectl get
/// pod ... -o name)` for a run's pod.
std::string port_forward_command(const EnvLayout& layout, const PortForward& forward);

}  // namespace mlenv::target::kube
