// `mlenvc destroy ENV`: take an applied env off its cluster, on purpose.

#include <iostream>

#include "compiler/apply/destroy.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"
#include "compiler/driver/options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kCommand = "destroy";
constexpr const char* kUsage =
    "usage: mlenvc destroy ENV [--kubectl PATH] [--context NAME] [--dry-run]\n"
    "                      [--allow-destroy=ADDRESS]... [--timeout=30m]\n"
    "\n"
    "Frees the env's GPUs and keeps its data: deletes from the cluster every object the last\n"
    "`mlenvc apply` of ENV (or CLUSTER/ENV) applied, in reverse apply order, then the Secrets\n"
    "apply created for it and its ApplySet parent, and records the env as destroyed in\n"
    "refs/mlenv/applied/<cluster>/<env>. Its PVCs (and the claims a StatefulSet gave its pods)\n"
    "are kept, each printed with the --allow-destroy=ADDRESS that deletes it; only the claims\n"
    "--allow-destroy names are deleted. PersistentVolumes and shared objects\n"
    "(<cluster>/_shared/...) need --allow-destroy (else nothing runs); a shared object another\n"
    "env of the cluster still holds is never deleted. On Slurm the job is cancelled and the\n"
    "env's files stay. The env stays in the program: remove it there too, or the next apply\n"
    "creates it again.\n"
    "\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one); its server's host must be the cluster's `api`\n"
    "  --dry-run              print every command, run none\n"
    "  --allow-destroy=ADDR   allow deleting ADDR (<cluster>/<env>/<Kind>/<name>); repeatable\n"
    "  --timeout=DURATION     limit for each client call (default 30m)\n";

}  // namespace

int run_destroy(const Args& args) {
  Options options = parse_options(args, {"help", "h", "dry-run"},
                                  {"kubectl", "context", "allow-destroy", "timeout"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  if (!options.error.empty() || options.positional.size() != 1) {
    std::cerr << "mlenvc destroy: "
              << (options.error.empty() ? std::string("name one ENV") : options.error) << '\n'
              << kUsage;
    return 1;
  }
  plan::DestroyRequest request;
  request.env = options.positional[0];
  request.client = options.value("kubectl").value_or("");
  std::optional<std::string> context = read_context(options, kCommand);
  if (!context) return 1;
  request.context = *context;
  request.dry_run = options.flag("dry-run");
  request.steps.timeout = options.value("timeout").value_or("30m");
  if (auto it = options.values.find("allow-destroy"); it != options.values.end())
    request.steps.allow_destroy.insert(it->second.begin(), it->second.end());
  Diagnostics diagnostics;
  int status = plan::destroy_env(request, std::cout, diagnostics);
  SourceManager none;
  for (const Diagnostic& d : diagnostics.all()) render_text(std::cerr, none, d);
  return status;
}

}  // namespace mlenv::driver
