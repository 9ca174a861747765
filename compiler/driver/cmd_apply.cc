// `mlenvc apply [PLAN_DIR...]`: apply committed, fresh plans with oc/kubectl, safely.

#include <iostream>

#include "compiler/apply/apply_session.h"
#include "compiler/base/file_system.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/day2_options.h"
#include "compiler/driver/options.h"
#include "compiler/driver/pipeline.h"
#include "targets/target.h"

namespace mlenv::driver {
namespace {

constexpr const char* kCommand = "apply";
constexpr const char* kUsage =
    "usage: mlenvc apply [PLAN_DIR...] [--kubectl PATH] [--context NAME] [--dry-run]\n"
    "                    [--allow-destroy=ADDRESS]... [--timeout=30m] [--wait] [--admin]\n"
    "\n"
    "Applies every env plan under PLAN_DIR (default: plans/ of the repository) that is\n"
    "committed at HEAD and fresh, with server-side apply (field manager `mlenvc`), in order.\n"
    "It checks that each Namespace exists and that each env's ServiceAccount may use the\n"
    "admission policy its pods need (OpenShift), creates missing Secrets with random bytes,\n"
    "builds images (only when the Dockerfile or _runtime/ changed) and runs workloads by the\n"
    "built digest, waits for rollouts, and prunes objects that left the plan. An env applied\n"
    "from PLAN_DIR that the plan no longer holds is destroyed: its objects deleted newest\n"
    "first, as `mlenvc destroy` does, and its claims kept (each printed with the\n"
    "--allow-destroy=ADDRESS that deletes it) unless --allow-destroy names them.\n"
    "PVCs, PersistentVolumes, Namespaces, admission policies, `_admin` objects and shared objects\n"
    "(<cluster>/_shared/...) are deleted only when --allow-destroy names each of them; apply\n"
    "refuses (E0704) to prune or replace one otherwise, except an env's claims as it leaves.\n"
    "\n"
    "  --kubectl PATH         the client (default: the platform's, oc or kubectl, on PATH)\n"
    "  --context NAME         the kubeconfig context every oc/kubectl call uses (default: the\n"
    "                         current one); its server's host must be the cluster's `api`\n"
    "  --dry-run              print every command, run none\n"
    "  --allow-destroy=ADDR   allow deleting ADDR (<cluster>/<env>/<Kind>/<name>); repeatable\n"
    "  --timeout=DURATION     limit for each client call, build, rollout and wait (default 30m)\n"
    "  --wait                 wait for each run (Job) to finish; exit 3 when one failed\n"
    "  --admin                apply only the `_admin` objects (admission policy, Role, binding):\n"
    "                         the platform team, once, with cluster-admin rights\n";

}  // namespace

int run_apply(const Args& args) {
  Options options = parse_options(args, {"help", "h", "dry-run", "wait", "admin"},
                                  {"kubectl", "context", "allow-destroy", "timeout"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  if (!options.error.empty()) {
    std::cerr << "mlenvc apply: " << options.error << '\n' << kUsage;
    return 1;
  }
  plan::ApplyRequest request;
  request.plan_dirs = options.positional;
  request.client = options.value("kubectl").value_or("");
  std::optional<std::string> context = read_context(options, kCommand);
  if (!context) return 1;
  request.context = *context;
  request.dry_run = options.flag("dry-run");
  request.steps.wait = options.flag("wait");
  request.steps.admin = options.flag("admin");
  request.steps.timeout = options.value("timeout").value_or("30m");
  if (auto it = options.values.find("allow-destroy"); it != options.values.end())
    request.steps.allow_destroy.insert(it->second.begin(), it->second.end());
  request.render = [](const std::string& source, Diagnostics&) -> std::optional<target::Output> {
    DiskFileSystem disk;
    std::unique_ptr<Compilation> compilation = compile(source, disk);
    std::optional<target::Output> output = render(*compilation, *target::make_program_target());
    print_diagnostics(*compilation, false);
    return output;
  };
  Diagnostics diagnostics;
  int status = plan::apply_plans(request, std::cout, diagnostics);
  SourceManager none;
  for (const Diagnostic& d : diagnostics.all()) render_text(std::cerr, none, d);
  return status;
}

}  // namespace mlenv::driver
