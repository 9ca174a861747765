#include "compiler/plan/apply/slurm_apply.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "compiler/plan/apply/records.h"
#include "compiler/plan/apply/runner.h"
#include "compiler/plan/apply/slurm_jobs.h"

namespace mlenv::plan {
namespace {

// --wait on Slurm: the job's state until it finishes; kExitRunFailed unless it completed.
int wait_for_job(const ApplyRequest& request, const std::string& unit, const std::string& id,
                 std::ostream& out, Diagnostics& diagnostics) {
  const int timeout = *parse_duration(request.steps.timeout);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<slurm::JobState> state = slurm::job_state(id, 30);
    if (state && state->finished) {
      out << unit << ": job " << id << " " << state->state
          << (state->reason.empty() ? "" : " (" + state->reason + ")") << '\n';
      if (state->succeeded) return 0;
      diagnostics.report(Code::E0713, {}, unit + ": Slurm job " + id + " ended " + state->state,
                         "its output: " + slurm::log_files(unit.substr(unit.find('/') + 1), id)[0]);
      return kExitRunFailed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(request.poll_ms));
  }
  diagnostics.report(Code::E0713, {},
                     unit + ": Slurm job " + id + " did not finish within --timeout",
                     "see it with squeue -j " + id);
  return kExitRunFailed;
}

// Submits one env's `submit` action; its exit status as apply_slurm_envs counts it.
int submit_env(const ApplyRequest& request, Repository& repo, const Head& head,
               const ObjectId& head_tree, const std::string& workdir, const EnvPlan& env,
               const PlanAction& action, std::ostream& out, Diagnostics& diagnostics) {
  const std::string dir = workdir + "/" + env.dir;
  out << (request.dry_run ? "Would submit " : "Submitting ") << env.unit << ": "
      << shell_words(slurm::submit_command("sbatch", dir, action.script)) << '\n';
  if (request.dry_run) return 0;
  std::string error;
  std::optional<std::string> id =
      slurm::submit(dir, action.script, *parse_duration(request.steps.timeout), error);
  if (!id) {
    diagnostics.report(Code::E0730, {}, env.unit + ": " + error,
                       "sbatch's message above says why; nothing was recorded");
    return 1;
  }
  out << "Submitted " << env.unit << " as Slurm job " << *id << '\n';
  if (!record_applied(repo, env, false, *head.commit, head_tree, diagnostics,
                      std::string(kSlurmJobTrailer) + *id + "\n"))
    return 1;
  return request.steps.wait ? wait_for_job(request, env.unit, *id, out, diagnostics) : 0;
}

}  // namespace

std::vector<EnvPlan> take_slurm_envs(std::vector<EnvPlan>& envs) {
  std::vector<EnvPlan> slurm;
  std::vector<EnvPlan> rest;
  for (EnvPlan& env : envs) {
    (env.manifest.platform == "slurm" ? slurm : rest).push_back(std::move(env));
  }
  envs = std::move(rest);
  return slurm;
}

int apply_slurm_envs(const ApplyRequest& request, Repository& repo, const Head& head,
                     const ObjectId& head_tree, const std::string& workdir,
                     const std::vector<EnvPlan>& envs, std::ostream& out,
                     Diagnostics& diagnostics) {
  if (request.steps.admin) return 0;  // a Slurm env has nothing for the platform team
  int status = 0;
  for (const EnvPlan& env : envs) {
    for (const PlanAction& action : env.manifest.actions) {
      if (action.action != "submit") continue;
      int one = submit_env(request, repo, head, head_tree, workdir, env, action, out, diagnostics);
      if (one == 1) return 1;
      status = std::max(status, one);
    }
  }
  return status;
}

bool cancel_slurm_env(const ApplyRequest& request, Repository& repo, const EnvPlan& env,
                      const std::string& why, std::ostream& out, Diagnostics& diagnostics) {
  const std::string id =
      env.applied_commit ? trailer(repo.commit_message(*env.applied_commit), kSlurmJobTrailer) : "";
  out << (request.dry_run ? "Would destroy " : "Destroying ") << env.unit << '\n';
  if (!id.empty()) out << "$ " << shell_words(slurm::cancel_command(id)) << '\n';
  if (request.dry_run) return true;
  // scancel of a job that already ended changes nothing: the job is gone either way.
  if (!id.empty())
    run_command(slurm::cancel_command(id), "", *parse_duration(request.steps.timeout));
  return record_destroyed(repo, env, false, why, diagnostics);
}

bool cancel_removed_slurm_envs(const ApplyRequest& request, Repository& repo,
                               const std::vector<EnvPlan>& removed, const ObjectId& head,
                               std::ostream& out, Diagnostics& diagnostics) {
  if (request.steps.admin) return true;
  for (const EnvPlan& env : removed) {
    if (!cancel_slurm_env(request, repo, env, "The env left the plan at " + to_hex(head) + ".", out,
                          diagnostics))
      return false;
  }
  return true;
}

}  // namespace mlenv::plan
