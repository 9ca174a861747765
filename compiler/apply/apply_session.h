#pragma once
// One `mlenvc apply`: find the env plans, prove each is committed and fresh, compute every
// env's steps (refusing unsafe deletes before anything runs), run them, and record each applied
// env as `refs/mlenv/applied/<cluster>/<env>`.

#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "compiler/apply/env_plan.h"
#include "compiler/diag/diagnostic.h"
#include "targets/target.h"

namespace mlenv::plan {

/// Renders root file `source` (relative to the work tree) again; nullopt when it has errors,
/// which the renderer has already reported.
using Renderer =
    std::function<std::optional<target::Output>(const std::string& source, Diagnostics&)>;

struct ApplyRequest {
  std::vector<std::string> plan_dirs;  ///< as given; empty: `plans/` of the repository
  std::string client;  ///< --kubectl PATH; "" for the platform's client on PATH (platform_client)
  /// --context NAME: the kubeconfig context every oc/kubectl call names (`--context=NAME`); ""
  /// for the client's current one.
  std::string context;
  bool dry_run = false;
  StepOptions steps;
  Renderer render;
  int poll_ms = 5000;  ///< how often --wait asks for a Job's conditions
};

/// apply's exit status when a run it waited for (--wait) failed.
constexpr int kExitRunFailed = 3;

/// Runs the request from the current directory, printing commands to `out`. Returns the exit
/// status: 0 applied (or printed), 1 refused or failed with diagnostics reported,
/// kExitRunFailed when everything was applied but a run waited for ended Failed.
int apply_plans(const ApplyRequest& request, std::ostream& out, Diagnostics& diagnostics);

}  // namespace mlenv::plan
