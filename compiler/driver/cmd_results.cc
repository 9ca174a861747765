// `mlenvc results ENV`: the pass/fail table of an acceptance run, from rank 0's pod log.

#include <iostream>

#include "compiler/apply/results.h"
#include "compiler/apply/runner.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"
#include "compiler/driver/options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc results ENV [--format=text|json] [--kubectl PATH] [--context NAME] "
    "[--timeout=60s]\n"
    "\n"
    "Shows the result of the acceptance run ENV (or CLUSTER/ENV), as planned in the\n"
    "committed plans: the NCCL self-test's table (size, time, algbw, busbw), the average bus\n"
    "bandwidth, the threshold and PASSED or FAILED, read from the `MLENV_RESULTS` line that\n"
    "rank 0 prints (on Slurm: the results.json it writes beside the job's logs), then the\n"
    "suspects the localisation named (node, rail, measured, expected, what to check).\n"
    "Exit status: 0 passed, 2 failed with suspects named, 1 failed with no single suspect,\n"
    "no result yet, or an error.\n"
    "\n"
    "  --format=json          print the results.json document instead of the table\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one; apply's --context)\n"
    "  --timeout=DURATION     limit for reading the log (default 60s)\n";

}  // namespace

int run_results(const Args& args) {
  Options options = parse_options(args, {"help", "h"}, {"format", "kubectl", "context", "timeout"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  if (!options.error.empty() || options.positional.size() != 1) {
    std::cerr << "mlenvc results: " << (options.error.empty() ? "name one env" : options.error)
              << '\n'
              << kUsage;
    return 1;
  }
  plan::ResultsRequest request;
  if (!json_format(options, request.json)) return 1;
  request.env = options.positional[0];
  request.client = options.value("kubectl").value_or("");
  std::optional<std::string> context = read_context(options, "results");
  if (!context) return 1;
  request.context = *context;
  std::optional<int> timeout = plan::parse_duration(options.value("timeout").value_or("60s"));
  if (!timeout) {
    std::cerr << "mlenvc results: --timeout is a duration like 60s or 5m (at most 720h)\n";
    return 1;
  }
  request.timeout_seconds = *timeout;
  Diagnostics diagnostics;
  int status = plan::show_results(request, std::cout, diagnostics);
  SourceManager none;
  for (const Diagnostic& d : diagnostics.all()) render_text(std::cerr, none, d);
  return status;
}

}  // namespace mlenv::driver
