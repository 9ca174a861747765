// `mlenvc destroy ENV`: take an applied env off its cluster, on purpose.

#include <iostream>

#include "compiler/apply/destroy.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc destroy ENV [--kubectl PATH] [--dry-run] [--allow-destroy=ADDRESS]...\n"
    "                      [--timeout=30m]\n"
    "\n"
    "Deletes from the cluster every object the last `mlenvc apply` of ENV (or CLUSTER/ENV)\n"
    "applied, in reverse apply order, then the Secrets apply created for it and its ApplySet\n"
    "parent, and records the env as destroyed in refs/mlenv/applied/<cluster>/<env>.\n"
    "PVCs, PersistentVolumes and shared objects (<cluster>/_shared/...) are deleted only when\n"
    "--allow-destroy names each; a shared object another env of the cluster still holds is\n"
    "never deleted. The env stays in the program: remove it there too, or the next apply\n"
    "creates it again.\n"
    "\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --dry-run              print every command, run none\n"
    "  --allow-destroy=ADDR   allow deleting ADDR (<cluster>/<env>/<Kind>/<name>); repeatable\n"
    "  --timeout=DURATION     limit for each client call (default 30m)\n";

}  // namespace

int run_destroy(const Args& args) {
  Options options =
      parse_options(args, {"help", "h", "dry-run"}, {"kubectl", "allow-destroy", "timeout"});
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
