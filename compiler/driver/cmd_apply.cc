// `mlenvc apply [PLAN_DIR...]`: apply committed, fresh plans with oc/kubectl, safely.

#include <iostream>

#include "compiler/base/file_system.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/pipeline.h"
#include "compiler/plan/apply/apply_session.h"
#include "targets/target.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc apply [PLAN_DIR...] [--kubectl PATH] [--dry-run] [--allow-destroy=ADDRESS]...\n"
    "                    [--timeout=30m]\n"
    "\n"
    "Applies every env plan under PLAN_DIR (default: plans/ of the repository) that is\n"
    "committed at HEAD and fresh, with server-side apply (field manager `mlenvc`), in order;\n"
    "builds images and waits for rollouts; prunes objects that left the plan. PVCs,\n"
    "PersistentVolumes, Namespaces, SCCs and `_admin` objects are deleted only when\n"
    "--allow-destroy names each of them.\n"
    "\n"
    "  --kubectl PATH         the client (default: oc, then kubectl, on PATH)\n"
    "  --dry-run              print every command, run none\n"
    "  --allow-destroy=ADDR   allow deleting ADDR (<cluster>/<env>/<Kind>/<name>); repeatable\n"
    "  --timeout=DURATION     limit for each build and rollout (default 30m)\n";

}  // namespace

int run_apply(const Args& args) {
  plan::ApplyRequest request;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--kubectl" && i + 1 < args.size()) {
      request.client = args[++i];
    } else if (arg.starts_with("--kubectl=")) {
      request.client = arg.substr(10);
    } else if (arg == "--dry-run") {
      request.dry_run = true;
    } else if (arg.starts_with("--allow-destroy=")) {
      request.steps.allow_destroy.insert(arg.substr(16));
    } else if (arg.starts_with("--timeout=")) {
      request.steps.timeout = arg.substr(10);
    } else if (!arg.starts_with("-")) {
      request.plan_dirs.push_back(arg);
    } else {
      std::cerr << "mlenvc apply: unexpected argument `" << arg << "`\n" << kUsage;
      return 1;
    }
  }
  request.render = [](const std::string& source, Diagnostics&) -> std::optional<target::Output> {
    DiskFileSystem disk;
    std::unique_ptr<Compilation> compilation = compile(source, disk);
    std::optional<target::Output> output = render(*compilation, *target::make_target("openshift"));
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
