#pragma once
// apply on Slurm: each env's batch script is submitted with sbatch (plan.json action `submit`)
// and its job id recorded with the applied plan (trailer `Slurm-Job:`); an env that left the
// plan has its recorded job cancelled with scancel.

#include <ostream>
#include <vector>

#include "compiler/apply/apply_driver.h"
#include "compiler/apply/apply_session.h"
#include "compiler/apply/env_plan.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/plan/git_repo.h"

namespace mlenv::plan {

/// The trailer that records a submitted env's Slurm job id.
inline constexpr std::string_view kSlurmJobTrailer = "Slurm-Job: ";

/// A trailer of the Slurm provider's (`Slurm-Job: `, `Slurm-Image: `) in a record's message,
/// read back only as apply writes it: a job id (is_slurm_job_id) or the squashfs path
/// (is_squashfs_path), since it reaches scancel or sbatch as an argument; "" otherwise.
std::string slurm_trailer(const std::string& message, std::string_view key);

/// The Slurm provider's ApplyDriver: envs are submitted with sbatch, not applied.
class SlurmApplyDriver : public ApplyDriver {
 public:
  /// Cancels the jobs of `removed` (cancel_removed_slurm_envs), then submits `envs`
  /// (apply_slurm_envs).
  int apply(const ApplyContext& context, const std::vector<EnvPlan>& envs,
            const std::vector<EnvPlan>& removed, std::ostream& out,
            Diagnostics& diagnostics) const override;
  /// Cancels the recorded job (cancel_slurm_env).
  int destroy(const DestroyRequest& request, Repository& repo, const EnvPlan& env,
              std::ostream& out, Diagnostics& diagnostics) const override;
};

/// Submits each env's script from its directory and records the job id; with --wait, once
/// every env is submitted, follows all their jobs to their ends. Returns apply's exit status
/// (1, kExitRunFailed or 0).
int apply_slurm_envs(const ApplyRequest& request, Repository& repo, const Head& head,
                     const ObjectId& head_tree, const std::string& workdir,
                     const std::vector<EnvPlan>& envs, std::ostream& out, Diagnostics& diagnostics);

/// Cancels the job `env`'s applied record names (`scancel`) and records the env as destroyed,
/// `why` in the record. False when the record could not be written (E0708).
bool cancel_slurm_env(const ApplyRequest& request, Repository& repo, const EnvPlan& env,
                      const std::string& why, std::ostream& out, Diagnostics& diagnostics);

/// cancel_slurm_env for each Slurm env that left the plan at `head`.
bool cancel_removed_slurm_envs(const ApplyRequest& request, Repository& repo,
                               const std::vector<EnvPlan>& removed, const ObjectId& head,
                               std::ostream& out, Diagnostics& diagnostics);

}  // namespace mlenv::plan
