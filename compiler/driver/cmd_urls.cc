// `mlenvc urls ENV`: the URLs of an env's Routes.

#include <iostream>

#include "compiler/day2/commands.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc urls ENV [--kubectl PATH] [--context NAME] [--timeout=60s]\n"
    "\n"
    "Prints the URL of each Route of the env ENV (or CLUSTER/ENV): one per service (vscode,\n"
    "jupyter, tensorboard), https, behind the OpenShift login. Not on Slurm (E0755).\n"
    "\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one; apply's --context)\n"
    "  --timeout=DURATION     limit for the client call (default 60s)\n";

}  // namespace

int run_urls(const Args& args) {
  Options options = parse_options(args, {"help", "h"}, {"kubectl", "context", "timeout"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  plan::day2::EnvRequest target;
  if (!read_target(options, {"urls", kUsage, 1, 1, "60s"}, target)) return 1;
  Diagnostics diagnostics;
  return finish(plan::day2::show_urls(target, std::cout, diagnostics), diagnostics);
}

}  // namespace mlenv::driver
