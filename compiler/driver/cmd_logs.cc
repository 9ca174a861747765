// `mlenvc logs ENV [-f] [--rank N]`: every rank's log, each line prefixed with its rank.

#include <iostream>

#include "compiler/day2/commands.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc logs ENV [-f] [--rank N] [--kubectl PATH] [--context NAME] [--timeout=60s]\n"
    "\n"
    "Prints the log of every rank of the env ENV (or CLUSTER/ENV), rank after rank, each line\n"
    "prefixed with its rank (`[1] ...`). With -f, follows every rank at once until Ctrl-C;\n"
    "lines of different ranks never mix within a line. A Slurm env's log is its job's output\n"
    "and error files (each rank's lines shown as `[N] `, the batch script's own as `[job] `);\n"
    "-f follows them until the job ends.\n"
    "\n"
    "  -f, --follow           follow the logs of every rank as they grow\n"
    "  --rank N               only rank N\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one; apply's --context)\n"
    "  --timeout=DURATION     limit for each client call, -f excepted (default 60s)\n";

}  // namespace

int run_logs(const Args& args) {
  Options options =
      parse_options(args, {"help", "h", "f", "follow"}, {"kubectl", "context", "timeout", "rank"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  plan::day2::LogsRequest request;
  if (!read_target(options, {"logs", kUsage, 1, 1, "60s"}, request.target)) return 1;
  if (options.value("rank")) {
    std::optional<int> rank = read_rank(options, "logs", kUsage);
    if (!rank) return 1;
    request.rank = *rank;
  }
  request.follow = options.flag("f") || options.flag("follow");
  Diagnostics diagnostics;
  int status = plan::day2::show_logs(request, std::cout, diagnostics);
  return finish(status, diagnostics);
}

}  // namespace mlenv::driver
