// `mlenvc dev-session ENV DIR`: debugpy forwarded and DIR synced on every change, together.

#include <iostream>

#include "compiler/day2/commands.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc dev-session ENV DIR [--local PORT] [--kubectl PATH] [--context NAME] "
    "[--timeout=30m]\n"
    "\n"
    "A dev session on the env ENV (or CLUSTER/ENV) in one command, as `make dev-session` did:\n"
    "forwards localhost:5678 to debugpy in rank 0's pod (the env sets `debug = true`) and\n"
    "copies the contents of DIR into /workspace (every pod with storage per_pod, rank 0's with\n"
    "rwx), again whenever a file of DIR changes (checked every second). Ctrl-C or SIGTERM ends\n"
    "both; the port-forward is stopped with it. Attach a debugger to localhost:5678.\n"
    "\n"
    "  --local PORT           the local port for debugpy (default 5678)\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one; apply's --context)\n"
    "  --timeout=DURATION     limit for each client call but the forward (default 30m)\n";

}  // namespace

int run_dev_session(const Args& args) {
  Options options = parse_options(args, {"help", "h"}, {"kubectl", "context", "timeout", "local"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  plan::day2::DevSessionRequest request;
  if (!read_target(options, {"dev-session", kUsage, 2, 2, "30m"}, request.target)) return 1;
  request.dir = options.positional[1];
  if (options.value("local")) {
    std::optional<int> local = read_port(options, "dev-session", kUsage);
    if (!local) return 1;
    request.local_port = *local;
  }
  Diagnostics diagnostics;
  int status = plan::day2::dev_session(request, std::cout, diagnostics);
  return finish(status, diagnostics);
}

}  // namespace mlenv::driver
