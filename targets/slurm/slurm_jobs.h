#pragma once
// A Slurm env's job, through Slurm's own clients: submit (`sbatch --parsable`), status
// (`squeue`, then `sacct`), logs (the files the script's `--output`/`--error` name) and cancel
// (`scancel`), shell (`srun --overlap` into the job). The day-2 commands (`mlenvc status`,
// `logs`, `shell`, `results`, `destroy`) call these for the Slurm provider's envs.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlenv::plan::slurm {

/// The job id in `sbatch --parsable` output (`<id>` or `<id>;<cluster>`, one line), or nullopt
/// when the output is not that or the id is not one a record can hold (is_slurm_job_id).
std::optional<std::string> parse_job_id(std::string_view parsable);

/// `sbatch --parsable --chdir=<env_dir> <env_dir>/<script> [<config> [<image>]]`: the job's
/// working directory is the env directory, where the script finds boot.json (or `config`, the
/// copy apply checked, relative to it) and the squashfs `image` apply imported, and writes its
/// logs.
std::vector<std::string> submit_command(const std::string& sbatch, const std::string& env_dir,
                                        const std::string& script, const std::string& config = "",
                                        const std::string& image = "");

/// Where a job is, as Slurm says it (`PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, ...).
struct JobState {
  std::string state;   ///< Slurm's job state, upper case; "" when unknown
  std::string reason;  ///< why it is pending or how it ended (`Resources`, `NonZeroExitCode`)
  std::string nodes;   ///< the job's node list as Slurm writes it (`n[1-2]`), "" while pending
  bool finished = false;
  bool succeeded = false;  ///< finished and COMPLETED
};

/// The state from `squeue -h -t all -j ID -o %T|%r|%N` output; nullopt when it names no job
/// (a job the controller has forgotten, after MinJobAge).
std::optional<JobState> parse_squeue(std::string_view output);

/// The state from `sacct -n -X -P -j ID -o State,ExitCode,NodeList` output; nullopt when empty.
std::optional<JobState> parse_sacct(std::string_view output);

/// The commands that ask for a job's state, in the order to try them.
std::vector<std::string> squeue_command(const std::string& job_id);
std::vector<std::string> sacct_command(const std::string& job_id);

/// `scancel -- <id>`.
std::vector<std::string> cancel_command(const std::string& job_id);

/// The job's output and error files, relative to the env directory (the script's
/// `--output=<logs>/%x-%j.out`, `--error=<logs>/%x-%j.err`; %x is the job name, the env's).
std::vector<std::string> log_files(const std::string& env, const std::string& job_id);

/// The job's acceptance results beside its logs (the script's `--results`), relative to the env
/// directory: `logs/<env>-<id>.results.json`.
std::string results_file(const std::string& env, const std::string& job_id);

/// `scontrol show hostnames <nodes>`: a node list expression, one name a line, in the job's
/// node order (SLURM_NODEID 0 first).
std::vector<std::string> hostnames_command(const std::string& nodes);

/// The node names of `scontrol show hostnames` output.
std::vector<std::string> parse_hostnames(std::string_view output);

/// A line of a job log written through `srun --label`: the task number Slurm put before it
/// (`0: text`, or ` 7: text` padded to the widest task number) and the text after it; no task
/// for a line the batch script itself wrote.
struct LabelledLine {
  std::optional<int> task;
  std::string_view text;
};
LabelledLine parse_labelled_line(std::string_view line);

/// `srun --jobid=<id> --overlap --nodes=1 --ntasks=1 --nodelist=<node> [--pty] bash -l`: a login
/// shell on one node of a running job, beside its steps.
std::vector<std::string> shell_command(const std::string& srun, const std::string& job_id,
                                       const std::string& node, bool tty);

/// The job's nodes in rank order (`scontrol show hostnames`), or `nodes` itself when scontrol
/// cannot expand it; empty when `nodes` is.
std::vector<std::string> job_nodes(const std::string& nodes, int timeout_seconds);

/// A job's state, asking squeue and then sacct; nullopt when neither knows the job.
std::optional<JobState> job_state(const std::string& job_id, int timeout_seconds);

/// Cancels the job with the scancel on PATH; false when scancel is missing or fails.
bool cancel(const std::string& job_id, int timeout_seconds);

/// Submits the env's script (submit_command's arguments); the job id, or nullopt with the
/// reason in `error`.
std::optional<std::string> submit(const std::string& env_dir, const std::string& script,
                                  const std::string& config, const std::string& image,
                                  int timeout_seconds, std::string& error);

}  // namespace mlenv::plan::slurm
