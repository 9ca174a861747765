// `mlenvc shell ENV [--rank N]`: a login shell in a rank's pod.

#include <unistd.h>

#include <iostream>

#include "compiler/day2/commands.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc shell ENV [--rank N] [--kubectl PATH] [--context NAME] [--timeout=60s]\n"
    "\n"
    "Opens a login shell (bash, else sh) in the main container of rank N's pod of the env ENV\n"
    "(or CLUSTER/ENV), with `oc exec`: the job's variables (NCCL_*, MASTER_ADDR, NODE_RANK,\n"
    "...) are set, /workspace is the home. On Slurm, a login shell on rank N's node inside the\n"
    "running job, on the host, not in the image: a new step of the job, with Slurm's SLURM_*\n"
    "variables but none that mlenv-boot set for the workers (RANK, MASTER_ADDR, NCCL_*).\n"
    "Exits with the shell's status.\n"
    "\n"
    "  --rank N               the rank (default 0: the pod that runs the services)\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one; apply's --context)\n"
    "  --timeout=DURATION     limit for finding the pod (default 60s); the shell has none\n";

}  // namespace

int run_shell(const Args& args) {
  Options options = parse_options(args, {"help", "h"}, {"kubectl", "context", "timeout", "rank"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  plan::day2::ShellRequest request;
  if (!read_target(options, {"shell", kUsage, 1, 1, "60s"}, request.target)) return 1;
  std::optional<int> rank = read_rank(options, "shell", kUsage);
  if (!rank) return 1;
  request.rank = *rank;
  request.tty = isatty(STDIN_FILENO) != 0;
  Diagnostics diagnostics;
  int status = plan::day2::open_shell(request, diagnostics);
  return finish(status, diagnostics);
}

}  // namespace mlenv::driver
