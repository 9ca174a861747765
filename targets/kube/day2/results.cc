// `mlenvc results` of a pod platform's env: rank 0's `MLENV_RESULTS` log line (results.h).
#include <string>
#include <vector>

#include "compiler/apply/runner.h"
#include "targets/kube/day2/driver.h"
#include "targets/kube/day2/session.h"
#include "targets/kube/kube_apply.h"
#include "targets/kube/kube_provider.h"
#include "targets/kube/replace_rules.h"

namespace mlenv::plan::day2 {
namespace {

// Rank 0 is the pod of completion index 0 of the run, a workload of the kind its platform
// says (RunWorkload).
std::string rank0_selector(const PlanManifest& env) {
  const target::KubeProvider& platform = target::kube_provider(env.platform);
  std::string name = env.env;  // the target names the run's workload after the env
  for (const PlanObject& object : env.objects) {
    if (platform.is_run_kind(object.kind)) name = object.name;
  }
  return target::kube::rank0_selector(platform.run(), name);
}

}  // namespace

// Rank 0's `MLENV_RESULTS` log line, through the plan's platform client. nullopt with E0703
// when there is no client, E0719 when it points at another cluster than the plan's.
std::optional<ResultsSource> KubeDay2Driver::results(const PlanManifest& env,
                                                     const ResultsRequest& request,
                                                     Diagnostics& diagnostics) const {
  AppliedEnv applied;
  applied.unit = env.cluster + "/" + env.env;
  applied.plan = env;
  std::optional<Session> session = Session::of(
      std::move(applied), {request.env, request.client, request.timeout_seconds, request.context},
      diagnostics);
  if (!session || !session->check_server(diagnostics)) return std::nullopt;
  // With a selector, kubectl logs prints only the last 10 lines unless --tail says otherwise.
  std::vector<std::string> argv =
      session->argv({"logs", "-n", env.namespace_, "-l", rank0_selector(env), "--tail=-1"});
  RunResult log = run_command(argv, "", request.timeout_seconds, true);
  ResultsSource found;
  if (!log.timed_out && log.status == 0) found.json = find_results_line(log.output);
  found.note = "`" + shell_words({argv.begin() + 1, argv.end()}) + "` " +
               (log.timed_out ? std::string("timed out")
                : log.status  ? "exited with status " + std::to_string(log.status)
                              : std::string("printed no MLENV_RESULTS line"));
  return found;
}

}  // namespace mlenv::plan::day2
