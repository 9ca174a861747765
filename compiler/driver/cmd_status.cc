// `mlenvc status [ENV]`: what runs of the applied envs.

#include <iostream>

#include "compiler/day2/commands.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc status [ENV] [--kubectl PATH] [--context NAME] [--timeout=60s]\n"
    "\n"
    "Shows the env ENV (or CLUSTER/ENV; every applied env when none is named) as the cluster\n"
    "runs it: each rank's pod, node, phase, restarts and the transport its mlenv-boot chose\n"
    "(rdma or tcp, from /run/mlenv/status.json in the pod), the latest build of its image\n"
    "and the URLs it exposes. The env's namespace and ranks come from its last apply\n"
    "(refs/mlenv/applied/<cluster>/<env>). A Slurm env shows its job's state, each rank's\n"
    "node and the job's log file.\n"
    "\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one; apply's --context)\n"
    "  --timeout=DURATION     limit for each client call (default 60s)\n";

}  // namespace

int run_status(const Args& args) {
  Options options = parse_options(args, {"help", "h"}, {"kubectl", "context", "timeout"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  plan::day2::EnvRequest target;
  if (!read_target(options, {"status", kUsage, 0, 1, "60s"}, target)) return 1;
  Diagnostics diagnostics;
  return finish(plan::day2::show_status(target, std::cout, diagnostics), diagnostics);
}

}  // namespace mlenv::driver
