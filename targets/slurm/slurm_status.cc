// status, shell, and the refusals of a Slurm env (slurm_env.h).

#include <filesystem>

#include "compiler/apply/records.h"
#include "compiler/apply/runner.h"
#include "compiler/diag/render.h"
#include "targets/slurm/slurm_apply.h"
#include "targets/slurm/slurm_env.h"
#include "targets/slurm/slurm_jobs.h"

namespace mlenv::plan::day2 {
namespace {

// What sync and dev-session say instead on Slurm.
constexpr const char* kWorkspaceInstead =
    "a Slurm job's /workspace is the cluster's `workspace_dir` on its shared file system, which "
    "this host sees: copy into it with rsync or cp";

// E0703 unless Slurm's `client` is on PATH: the day-2 commands of a Slurm env run on a host of
// the cluster, as apply does.
std::optional<std::string> slurm_client(const char* client, Diagnostics& diagnostics) {
  std::optional<std::string> path = find_on_path(client);
  if (!path) {
    diagnostics.report(Code::E0703, {}, std::string("`") + client + "` is not on PATH",
                       "run mlenvc on a host of the Slurm cluster (a login node)");
  }
  return path;
}

// The job's state in one word, with Slurm's reason when it has one (`PENDING (Resources)`).
std::string state_text(const std::optional<slurm::JobState>& state) {
  if (!state) return "unknown";
  return printable(state->state) +
         (state->reason.empty() ? "" : " (" + printable(state->reason) + ")");
}

// One row per rank: rank N runs on the job's N-th node (its SLURM_NODEID), which a pending job
// has not got yet.
std::vector<std::vector<std::string>> rank_rows(const AppliedEnv& env,
                                                const std::optional<slurm::JobState>& state,
                                                int timeout_seconds) {
  std::vector<std::string> nodes =
      state ? slurm::job_nodes(state->nodes, timeout_seconds) : std::vector<std::string>{};
  const int ranks = std::max<int>(env.nodes, static_cast<int>(nodes.size()));
  std::vector<std::vector<std::string>> rows = {{"RANK", "NODE", "STATE"}};
  for (int rank = 0; rank < ranks; ++rank) {
    const std::string node =
        rank < static_cast<int>(nodes.size()) ? printable(nodes[rank]) : std::string("-");
    rows.push_back({std::to_string(rank), node, state_text(state)});
  }
  return rows;
}

}  // namespace

bool show_slurm_status(const AppliedEnv& env, int timeout_seconds, std::ostream& out,
                       Diagnostics& diagnostics) {
  out << env.unit << " (Slurm job " << job_id(env) << ", " << env.plan.env_kind;
  if (env.nodes > 0) out << ", " << env.nodes << (env.nodes == 1 ? " node" : " nodes");
  out << ")\n";
  if (!slurm_client("squeue", diagnostics)) return false;
  std::optional<slurm::JobState> state = slurm::job_state(job_id(env), timeout_seconds);
  print_table(out, rank_rows(env, state, timeout_seconds));
  if (!state) {
    out << "  job " << job_id(env)
        << ": neither squeue nor sacct knows it (it ended longer than MinJobAge ago, and "
           "accounting is off)\n";
  }
  const std::string log = slurm::log_files(env.plan.env, job_id(env))[0];
  out << "  log: " << (std::filesystem::path(env.dir) / log).string() << '\n';
  return true;
}

int open_slurm_shell(const AppliedEnv& env, const ShellRequest& request, Diagnostics& diagnostics) {
  if (!check_rank(env, request.rank, diagnostics)) return 1;
  std::optional<std::string> srun = slurm_client("srun", diagnostics);
  if (!srun || !slurm_client("squeue", diagnostics)) return 1;
  const int timeout = request.target.timeout_seconds;
  std::optional<slurm::JobState> state = slurm::job_state(job_id(env), timeout);
  std::vector<std::string> nodes =
      state ? slurm::job_nodes(state->nodes, timeout) : std::vector<std::string>{};
  if (!state || state->state != "RUNNING" || request.rank >= static_cast<int>(nodes.size())) {
    diagnostics.report(Code::E0752, {},
                       "rank " + std::to_string(request.rank) + " of `" + env.unit +
                           "` (Slurm job " + job_id(env) + ") is " + state_text(state) +
                           ", not running",
                       "see `mlenvc status " + env.unit + "`");
    return 1;
  }
  return run_attached(slurm::shell_command(*srun, job_id(env), nodes[request.rank], request.tty));
}

int refuse_on_slurm(const AppliedEnv& env, std::string_view command, std::string_view instead,
                    Diagnostics& diagnostics) {
  diagnostics.report(Code::E0755, {},
                     "`mlenvc " + std::string(command) + "` reaches into pods, and `" + env.unit +
                         "` is a Slurm job (Slurm job " + job_id(env) + ")",
                     std::string(instead));
  return 1;
}

std::string job_id(const AppliedEnv& env) {
  return slurm_trailer(env.record_message, kSlurmJobTrailer);
}

bool SlurmDay2Driver::status(AppliedEnv env, const EnvRequest& request, std::ostream& out,
                             Diagnostics& diagnostics) const {
  return show_slurm_status(env, request.timeout_seconds, out, diagnostics);
}

int SlurmDay2Driver::logs(AppliedEnv env, const LogsRequest& request, std::ostream& out,
                          Diagnostics& diagnostics) const {
  return show_slurm_logs(env, request, out, diagnostics);
}

int SlurmDay2Driver::shell(AppliedEnv env, const ShellRequest& request,
                           Diagnostics& diagnostics) const {
  return open_slurm_shell(env, request, diagnostics);
}

int SlurmDay2Driver::sync(AppliedEnv env, const SyncRequest&, std::ostream&,
                          Diagnostics& diagnostics) const {
  return refuse_on_slurm(env, "sync", kWorkspaceInstead, diagnostics);
}

int SlurmDay2Driver::port_forward(AppliedEnv env, const PortForwardRequest&,
                                  Diagnostics& diagnostics) const {
  return refuse_on_slurm(env, "port-forward",
                         "forward through ssh to rank 0's node, which `mlenvc status` names: "
                         "`ssh -L PORT:localhost:PORT NODE`",
                         diagnostics);
}

int SlurmDay2Driver::urls(AppliedEnv env, const EnvRequest&, std::ostream&,
                          Diagnostics& diagnostics) const {
  return refuse_on_slurm(env, "urls",
                         "a Slurm env has no Routes: reach a tool with `ssh -L` to rank 0's "
                         "node, which `mlenvc status` names",
                         diagnostics);
}

int SlurmDay2Driver::dev_session(AppliedEnv env, const DevSessionRequest&, std::ostream&,
                                 Diagnostics& diagnostics) const {
  return refuse_on_slurm(env, "dev-session", kWorkspaceInstead, diagnostics);
}

}  // namespace mlenv::plan::day2
