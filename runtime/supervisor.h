#pragma once
// Phase 7, launch and supervise: the workers (nproc_per_node copies of the command) and the
// services, as PID 1 of the pod. The first failure stops everything, here and on every node.

#include <functional>
#include <string>
#include <vector>

#include "control.h"
#include "process_env.h"

namespace boot {

/// One process to start: its argv and complete environment.
struct ChildSpec {
  std::string name;  ///< for the log: "worker 2", "service vscode"
  std::vector<std::string> argv;
  EnvMap env;
};

/// What to run and how long stopping may take.
struct LaunchSpec {
  std::vector<ChildSpec> workers;   ///< empty for a dev env (services only)
  std::vector<ChildSpec> services;  ///< started once; their exit alone never fails the job
  double grace_s = 30;              ///< SIGTERM to SIGKILL
  /// Told of a service that exits while the job runs (its name and exit code), so that
  /// `mlenvc status` can show it: a dead Jupyter leaves its port-forward leading nowhere.
  std::function<void(const std::string& name, int code)> service_exited;
};

/// Runs everything to the end and returns the exit code: 0 when every worker on every node
/// succeeded, the first failing worker's code (128+signal when killed), the code another node
/// failed with, kExitPeerLost, or 128+signal when mlenv-boot itself was told to stop. Children get
/// their own process group (so a whole tree is signalled) and die with mlenv-boot.
int supervise(const LaunchSpec& spec, ControlLink& link);

}  // namespace boot
