#pragma once
// Which env a day-2 command (status, shell, logs, sync, port-forward, urls) is about: the name
// the user typed (`ENV` or `CLUSTER/ENV`) resolved against the plans committed at HEAD and the
// apply records (`refs/mlenv/applied/<cluster>/<env>`), and what the last apply put on the
// cluster, read from that record's plan.json.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/diag/diagnostic.h"
#include "targets/common/plan_json.h"

namespace mlenv::plan::day2 {

/// An env as it was last applied.
struct AppliedEnv {
  std::string unit;  ///< `<cluster>/<env>`
  PlanManifest plan;
  /// plan.json `nodes`: pods (ranks) of the workload; 0 in records written before the key.
  int nodes = 0;
  /// plan.json `storage` is `rwx`: one /workspace every pod mounts. Records written before the
  /// key count as per-pod storage, so sync copies to every pod (never too few).
  bool shared_workspace = false;
  std::map<std::string, int> ports;  ///< plan.json `ports`: tool name → port in the pod
  /// The env directory the record was applied from, absolute (its trailer `Plan-Directory:`
  /// under the work tree): a Slurm job writes its logs there.
  std::string dir;
  /// The apply record's commit message, whose trailers a day-2 driver may read (what its
  /// apply driver recorded there).
  std::string record_message;
  /// The env was destroyed since: this is the apply record before the destroy's (resolve_env
  /// with `destroyed_too`), so only what outlives the env (a Slurm job's log files) is there.
  bool destroyed = false;
};

/// The env `name` names, as last applied, from the repository holding the current directory.
/// E0715 when no committed plan or record has it (or several clusters do), E0750 when it has
/// no apply record. With `destroyed_too`, a destroyed env is the record its destroy followed
/// (AppliedEnv::destroyed).
std::optional<AppliedEnv> resolve_env(const std::string& name, Diagnostics& diagnostics,
                                      bool destroyed_too = false);

/// Every env with an apply record, by unit.
std::optional<std::vector<AppliedEnv>> applied_envs(Diagnostics& diagnostics);

}  // namespace mlenv::plan::day2
