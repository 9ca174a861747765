#include "targets/kube/port_forward.h"

#include <algorithm>

namespace mlenv::target::kube {
namespace {

bool wanted(const std::vector<std::string>& names, const std::string& name) {
  return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

PortForward port_forward(const EnvLayout& layout, const RunWorkload& run,
                         const std::vector<std::string>& names) {
  PortForward forward;
  if (!layout.is_job) {
    forward.pod = "pod/" + layout.workload + "-0";
  } else {
    forward.selector = rank0_selector(run, layout.workload);
  }
  for (const ExposedService& s : layout.services) {
    if (wanted(names, s.name)) forward.ports.push_back(s.app_port);
  }
  if (layout.env->debug && (names.empty() || wanted(names, "debugpy"))) {
    forward.ports.push_back(kDebugpyPort);
  }
  return forward;
}

std::string port_forward_command(const EnvLayout& layout, const PortForward& forward) {
  const std::string ns = " -n " + layout.namespace_name + " ";
  std::string pod = forward.pod;
  if (pod.empty()) pod = "$(kubectl get pod" + ns + "-o name -l " + forward.selector + ")";
  std::string command = "kubectl port-forward" + ns + pod;
  for (int port : forward.ports) command += " " + std::to_string(port) + ":" + std::to_string(port);
  return command;
}

}  // namespace mlenv::target::kube
