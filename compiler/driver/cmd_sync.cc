// `mlenvc sync ENV DIR [--watch]`: a directory into /workspace of the env's pods.

#include <iostream>

#include "compiler/day2/commands.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc sync ENV DIR [--watch] [--kubectl PATH] [--context NAME] [--timeout=30m]\n"
    "\n"
    "Copies the contents of the local directory DIR into /workspace of the env ENV (or\n"
    "CLUSTER/ENV): into every pod when each pod has its own workspace (storage per_pod), into\n"
    "rank 0's pod only when all share one (rwx: the cluster's claims, which every env of the\n"
    "cluster mounts, or the env's own). With `oc rsync` (kubectl: `cp`); files are added and\n"
    "replaced, never deleted. Not on Slurm (E0755): copy into the cluster's workspace_dir,\n"
    "which the login node sees.\n"
    "\n"
    "  --watch                after the first copy, copy again whenever a file of DIR changes\n"
    "                         (checked every second) until Ctrl-C: a dev session\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one; apply's --context)\n"
    "  --timeout=DURATION     limit for each client call (default 30m)\n";

}  // namespace

int run_sync(const Args& args) {
  Options options = parse_options(args, {"help", "h", "watch"}, {"kubectl", "context", "timeout"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  plan::day2::SyncRequest request;
  if (!read_target(options, {"sync", kUsage, 2, 2, "30m"}, request.target)) return 1;
  request.dir = options.positional[1];
  request.watch = options.flag("watch");
  Diagnostics diagnostics;
  int status = plan::day2::sync_workspace(request, std::cout, diagnostics);
  return finish(status, diagnostics);
}

}  // namespace mlenv::driver
