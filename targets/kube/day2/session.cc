#include "targets/kube/day2/session.h"

#include <algorithm>
#include <filesystem>

#include "compiler/apply/runner.h"
#include "compiler/diag/render.h"
#include "targets/kube/apply/step_runner.h"
#include "targets/kube/kube_apply.h"

namespace mlenv::plan::day2 {

std::optional<Session> Session::of(AppliedEnv env, const EnvRequest& target,
                                   Diagnostics& diagnostics) {
  Session session;
  session.program_ = target.client;
  session.context_ = target.context;
  if (session.program_.empty()) session.program_ = platform_client(env.plan.platform);
  if (session.program_.empty()) {
    diagnostics.report(Code::E0703, {}, "neither `oc` nor `kubectl` is on PATH",
                       "install the client, or pass --kubectl PATH");
    return std::nullopt;
  }
  session.is_oc_ = std::filesystem::path(session.program_).filename() == "oc";
  session.env_ = std::move(env);
  session.timeout_seconds_ = target.timeout_seconds;
  session.restart_deadline();
  return session;
}

void Session::restart_deadline() {
  deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds_);
}

std::vector<std::string> Session::argv(const std::vector<std::string>& args) const {
  std::vector<std::string> out{program_};
  // One argument, validated at the command line (valid_context_name): never another option.
  if (!context_.empty()) out.push_back("--context=" + context_);
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

std::string Session::selector() const {
  return "app.kubernetes.io/instance=" + name();
}

bool Session::check_server(Diagnostics& diagnostics) const {
  if (server_checked_ || env_.plan.api.empty()) return true;
  server_checked_ = true;  // capture's call below must not check again
  std::optional<std::string> server = capture(current_server_args(program_), diagnostics);
  server_checked_ = server && is_cluster_server(*server, env_.plan.api, "`" + env_.unit + "`",
                                                "nothing was run on the cluster", diagnostics);
  return server_checked_;
}

std::optional<std::string> Session::capture(const std::vector<std::string>& args,
                                            Diagnostics& diagnostics) const {
  if (!check_server(diagnostics)) return std::nullopt;
  // Whole seconds left, rounded up, so a call never starts with a deadline of 0 (none).
  auto left = std::chrono::ceil<std::chrono::seconds>(deadline_ - std::chrono::steady_clock::now());
  RunResult result;
  result.timed_out = left.count() <= 0;
  if (!result.timed_out) result = run_command(argv(args), "", static_cast<int>(left.count()), true);
  if (!result.timed_out && !result.not_started && result.status == 0) return result.output;
  const std::string shown = "`" + shell_words(argv(args)) + "`";
  if (result.timed_out) {
    diagnostics.report(Code::E0707, {},
                       shown + " did not finish within the command's --timeout of " +
                           std::to_string(timeout_seconds_) + "s",
                       "raise --timeout, or check that the cluster answers");
  } else {
    diagnostics.report(
        Code::E0706, {},
        shown + (result.not_started ? std::string(" could not start")
                                    : " exited with status " + std::to_string(result.status)),
        "its own message is above");
  }
  return std::nullopt;
}

std::optional<std::vector<RankPod>> Session::rank_pods(Diagnostics& diagnostics) const {
  std::optional<std::string> json =
      capture({"get", "pods", "-n", namespace_(), "-l", selector(), "-o", "json"}, diagnostics);
  if (!json) return std::nullopt;
  std::string error;
  std::optional<std::vector<RankPod>> pods = parse_rank_pods(*json, name(), error);
  if (!pods) {
    diagnostics.report(Code::E0706, {}, "the pods of `" + env_.unit + "` are unreadable: " + error);
  }
  return pods;
}

bool Session::check_rank(int rank, Diagnostics& diagnostics) const {
  return day2::check_rank(env_, rank, diagnostics);
}

std::optional<RankPod> Session::running_pod(int rank, Diagnostics& diagnostics) const {
  if (!check_rank(rank, diagnostics)) return std::nullopt;
  std::optional<std::vector<RankPod>> pods = rank_pods(diagnostics);
  if (!pods) return std::nullopt;
  for (const RankPod& pod : *pods) {
    if (pod.rank != rank) continue;
    if (pod.running) return pod;
    diagnostics.report(Code::E0752, {},
                       "rank " + std::to_string(rank) + " of `" + env_.unit + "` (pod `" +
                           printable(pod.name) + "`) is " + printable(pod.phase) + ", not running",
                       "see `mlenvc status " + env_.unit + "`");
    return std::nullopt;
  }
  diagnostics.report(Code::E0752, {},
                     "rank " + std::to_string(rank) + " of `" + env_.unit + "` has no pod",
                     "see `mlenvc status " + env_.unit + "`");
  return std::nullopt;
}

}  // namespace mlenv::plan::day2
