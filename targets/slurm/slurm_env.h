#pragma once
// The day-2 commands for an env that runs as a Slurm job (plan.json `platform` `slurm`): the
// job its apply record names (`Slurm-Job:`), asked about through Slurm's own clients (squeue,
// sacct, scontrol, srun) and the log files the job writes in the env directory: the Slurm
// provider's Day2Driver (SlurmDay2Driver).

#include <ostream>
#include <string_view>

#include "compiler/day2/applied_env.h"
#include "compiler/day2/commands.h"
#include "compiler/day2/day2_driver.h"
#include "compiler/diag/diagnostic.h"

namespace mlenv::plan::day2 {

/// The Slurm job `env`'s apply record names (trailer `Slurm-Job:`), "" when none.
std::string job_id(const AppliedEnv& env);

/// `mlenvc status` of a Slurm env: the job's state, and each rank's node (the job's nodes in
/// order: rank N is SLURM_NODEID N) and the log file.
bool show_slurm_status(const AppliedEnv& env, int timeout_seconds, std::ostream& out,
                       Diagnostics& diagnostics);

/// `mlenvc logs` of a Slurm env: the job's output and error files, each line that `srun --label`
/// marked with task N shown as `[N] `, the batch script's own lines as `[job] `; -f follows
/// the files until the job ends.
int show_slurm_logs(const AppliedEnv& env, const LogsRequest& request, std::ostream& out,
                    Diagnostics& diagnostics);

/// `mlenvc shell` of a Slurm env: a login shell on rank N's node inside the running job (`srun
/// --jobid --overlap`), on the user's terminal.
int open_slurm_shell(const AppliedEnv& env, const ShellRequest& request, Diagnostics& diagnostics);

/// E0755: `command` reaches into pods, which a Slurm env has none of; `instead` says what to do
/// on Slurm. Returns 1.
int refuse_on_slurm(const AppliedEnv& env, std::string_view command, std::string_view instead,
                    Diagnostics& diagnostics);

class SlurmDay2Driver : public Day2Driver {
 public:
  bool status(AppliedEnv env, const EnvRequest& request, std::ostream& out,
              Diagnostics& diagnostics) const override;
  /// The job's log files stay in the env directory after `destroy`.
  bool logs_outlive_env() const override { return true; }
  int logs(AppliedEnv env, const LogsRequest& request, std::ostream& out,
           Diagnostics& diagnostics) const override;
  int shell(AppliedEnv env, const ShellRequest& request, Diagnostics& diagnostics) const override;
  /// E0755: a Slurm job's /workspace is a directory the login node sees.
  int sync(AppliedEnv env, const SyncRequest& request, std::ostream& out,
           Diagnostics& diagnostics) const override;
  /// E0755: rank 0 is reached with `ssh -L`.
  int port_forward(AppliedEnv env, const PortForwardRequest& request,
                   Diagnostics& diagnostics) const override;
  /// E0755: a Slurm env exposes no URL.
  int urls(AppliedEnv env, const EnvRequest& request, std::ostream& out,
           Diagnostics& diagnostics) const override;
  /// E0755, as sync.
  int dev_session(AppliedEnv env, const DevSessionRequest& request, std::ostream& out,
                  Diagnostics& diagnostics) const override;
  /// The results.json rank 0 wrote beside the recorded job's logs.
  std::optional<ResultsSource> results(const PlanManifest& env, const ResultsRequest& request,
                                       Diagnostics& diagnostics) const override;
};

}  // namespace mlenv::plan::day2
