#pragma once
// A Slurm env's job, through Slurm's own clients: submit (`sbatch --parsable`), status
// (`squeue`, then `sacct`), logs (the files the script's `--output`/`--error` name) and cancel
// (`scancel`). The day-2 commands (`mlenvc status`, `logs`, `destroy`) call these for envs
// whose plan.json says `"target": "slurm"`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlenv::plan::slurm {

/// The job id in `sbatch --parsable` output (`<id>` or `<id>;<cluster>`, one line), or nullopt
/// when the output is not that.
std::optional<std::string> parse_job_id(std::string_view parsable);

/// `sbatch --parsable --chdir=<env_dir> <env_dir>/<script>`: the job's working directory is the
/// env directory, where the script finds boot.json and writes its logs.
std::vector<std::string> submit_command(const std::string& sbatch, const std::string& env_dir,
                                        const std::string& script);

/// Where a job is, as Slurm says it (`PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, ...).
struct JobState {
  std::string state;   ///< Slurm's job state, upper case; "" when unknown
  std::string reason;  ///< why it is pending or how it ended (`Resources`, `NonZeroExitCode`)
  bool finished = false;
  bool succeeded = false;  ///< finished and COMPLETED
};

/// The state from `squeue -h -t all -j ID -o %T|%r` output; nullopt when it names no job
/// (a job the controller has forgotten, after MinJobAge).
std::optional<JobState> parse_squeue(std::string_view output);

/// The state from `sacct -n -X -P -j ID -o State,ExitCode` output; nullopt when empty.
std::optional<JobState> parse_sacct(std::string_view output);

/// The commands that ask for a job's state, in the order to try them.
std::vector<std::string> squeue_command(const std::string& job_id);
std::vector<std::string> sacct_command(const std::string& job_id);

/// `scancel <id>`.
std::vector<std::string> cancel_command(const std::string& job_id);

/// The job's output and error files, relative to the env directory (the script's
/// `--output=<logs>/%x-%j.out`, `--error=<logs>/%x-%j.err`; %x is the job name, the env's).
std::vector<std::string> log_files(const std::string& env, const std::string& job_id);

/// A job's state, asking squeue and then sacct; nullopt when neither knows the job.
std::optional<JobState> job_state(const std::string& job_id, int timeout_seconds);

/// Submits the env's script; the job id, or nullopt with the reason in `error`.
std::optional<std::string> submit(const std::string& env_dir, const std::string& script,
                                  int timeout_seconds, std::string& error);

}  // namespace mlenv::plan::slurm
