#pragma once
// One day-2 command's view of an applied env: the env resolved from the repository, the user's
// own client (oc, or kubectl), and the env's pods by rank.

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/day2/applied_env.h"
#include "compiler/day2/commands.h"
#include "compiler/diag/diagnostic.h"
#include "targets/kube/day2/cluster_json.h"

namespace mlenv::plan::day2 {

class Session {
 public:
  /// The session of an env resolved (resolve_env) and found off Slurm: finds the client (E0703).
  static std::optional<Session> of(AppliedEnv env, const EnvRequest& target,
                                   Diagnostics& diagnostics);

  const AppliedEnv& env() const { return env_; }
  const std::string& name() const { return env_.plan.env; }
  const std::string& namespace_() const { return env_.plan.namespace_; }
  /// The client is oc, which has `rsync` (kubectl has `cp`).
  bool is_oc() const { return is_oc_; }
  /// The client's argv for `args`.
  std::vector<std::string> argv(const std::vector<std::string>& args) const;
  /// `app.kubernetes.io/instance=<env>`: every pod, Route and build of the env carries it.
  std::string selector() const;

  /// Runs `args` with what is left of the command's deadline and returns its stdout; E0706 or
  /// E0707 when it fails, E0707 at once when the deadline has passed. The session's first
  /// call checks the server first (check_server).
  std::optional<std::string> capture(const std::vector<std::string>& args,
                                     Diagnostics& diagnostics) const;
  /// Refuses (E0719) when the host of the client's current server is not the `api` the env
  /// was applied to: a day-2 command never reaches the same names on another cluster. Asks
  /// the client once per session; plans written before plan.json held `api` are not checked.
  bool check_server(Diagnostics& diagnostics) const;
  /// Starts the deadline again: each round of `sync --watch` is a command of its own.
  void restart_deadline();
  /// The env's rank pods (`get pods -l <selector> -o json`).
  std::optional<std::vector<RankPod>> rank_pods(Diagnostics& diagnostics) const;
  /// E0751 unless `rank` is one of the env's ranks (checked before any client call).
  bool check_rank(int rank, Diagnostics& diagnostics) const;
  /// The pod of `rank`, which must be running (E0752).
  std::optional<RankPod> running_pod(int rank, Diagnostics& diagnostics) const;

 private:
  AppliedEnv env_;
  std::string program_;
  std::string context_;                  ///< --context NAME, "" for the client's current context
  mutable bool server_checked_ = false;  ///< check_server passed
  bool is_oc_ = false;
  int timeout_seconds_ = 60;
  std::chrono::steady_clock::time_point deadline_;  ///< timeout_seconds_ after Session::of
};

}  // namespace mlenv::plan::day2
