// `mlenvc port-forward ENV [SERVICE]`: a local port to debugpy or a service in rank 0's pod.

#include <iostream>

#include "compiler/day2/commands.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc port-forward ENV [SERVICE] [--local PORT] [--kubectl PATH] [--context NAME] "
    "[--timeout=60s]\n"
    "\n"
    "Forwards localhost:PORT to a port in rank 0's pod of the env ENV (or CLUSTER/ENV) until\n"
    "Ctrl-C: debugpy (5678, the env sets `debug = true`) by default, or SERVICE (vscode 8080,\n"
    "jupyter 8888, tensorboard 6006) directly, without its proxy. Attach a debugger to\n"
    "localhost:5678. Not on Slurm (E0755): `ssh -L` to rank 0's node.\n"
    "\n"
    "  --local PORT           the local port (default: the same as in the pod)\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one; apply's --context)\n"
    "  --timeout=DURATION     limit for finding the pod (default 60s); the forward has none\n";

}  // namespace

int run_port_forward(const Args& args) {
  Options options = parse_options(args, {"help", "h"}, {"kubectl", "context", "timeout", "local"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  plan::day2::PortForwardRequest request;
  if (!read_target(options, {"port-forward", kUsage, 1, 2, "60s"}, request.target)) return 1;
  if (options.positional.size() == 2) request.service = options.positional[1];
  if (options.value("local")) {
    std::optional<int> local = read_port(options, "port-forward", kUsage);
    if (!local) return 1;
    request.local_port = *local;
  }
  Diagnostics diagnostics;
  int status = plan::day2::port_forward(request, diagnostics);
  return finish(status, diagnostics);
}

}  // namespace mlenv::driver
