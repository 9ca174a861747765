#pragma once
// apply and the day-2 commands of platform local: each node of an env is a session of local
// processes (local_processes.h) started by apply, which records the env like any other.

#include "compiler/apply/apply_driver.h"
#include "compiler/day2/day2_driver.h"

namespace mlenv::plan {

/// The trailer of a local env's apply record: each rank's session, in rank order, as
/// `SID:START` (the leader's start time, which tells it from a process that reused its id).
inline constexpr std::string_view kLocalSessionsTrailer = "Local-Sessions: ";

/// The sessions a record's `Local-Sessions:` trailer names, read back only as apply writes it:
/// space-separated `SID` or `SID:START`, each SID 2 or more (stopping session 1, or 0 and
/// negative ids, which kill() reads as groups, would signal far more than an env's nodes);
/// none when any word is not one.
std::vector<std::string> recorded_session_records(const std::string& message);

/// The session ids of recorded_session_records.
std::vector<int> recorded_session_ids(const std::string& message);

/// Starts each env's nodes (plan.json action `start`); stops the nodes of a changed env first,
/// and of an env that left the plan; `--wait` waits for every node to exit.
class LocalApplyDriver : public ApplyDriver {
 public:
  int apply(const ApplyContext& context, const std::vector<EnvPlan>& envs,
            const std::vector<EnvPlan>& removed, std::ostream& out,
            Diagnostics& diagnostics) const override;
  /// Ends every process of the env's nodes, waits for them, and records the env destroyed.
  int destroy(const DestroyRequest& request, Repository& repo, const EnvPlan& env,
              std::ostream& out, Diagnostics& diagnostics) const override;
};

namespace day2 {

/// The day-2 commands on the env's local processes: status and logs from its `run/` files,
/// shell with the environment of a rank's command; sync, port-forward, urls and dev-session
/// have nothing to reach (E0755): the env runs here.
class LocalDay2Driver : public Day2Driver {
 public:
  bool status(AppliedEnv env, const EnvRequest& request, std::ostream& out,
              Diagnostics& diagnostics) const override;
  int logs(AppliedEnv env, const LogsRequest& request, std::ostream& out,
           Diagnostics& diagnostics) const override;
  int shell(AppliedEnv env, const ShellRequest& request, Diagnostics& diagnostics) const override;
  int sync(AppliedEnv env, const SyncRequest& request, std::ostream& out,
           Diagnostics& diagnostics) const override;
  int port_forward(AppliedEnv env, const PortForwardRequest& request,
                   Diagnostics& diagnostics) const override;
  int urls(AppliedEnv env, const EnvRequest& request, std::ostream& out,
           Diagnostics& diagnostics) const override;
  int dev_session(AppliedEnv env, const DevSessionRequest& request, std::ostream& out,
                  Diagnostics& diagnostics) const override;
  /// E0755: `results` reads a pod's log; rank 0's log is `run/rank-0.log`.
  std::optional<ResultsSource> results(const PlanManifest& env, const ResultsRequest& request,
                                       Diagnostics& diagnostics) const override;
};

}  // namespace day2
}  // namespace mlenv::plan
