#pragma once
// Phase 5, environment: the variables the workers get (NCCL's and torchrun's), the DeepSpeed
// hostfile and .deepspeed_env, all derived from the shared plan and this node's own probe.

#include <functional>
#include <string>
#include <vector>

#include "config.h"
#include "json.h"
#include "plan.h"
#include "probe.h"
#include "process_env.h"

namespace boot {

/// This node's environment for its workers.
struct NodeEnvironment {
  /// Every variable mlenv-boot manages, with the value the workers will see (the user's own where
  /// the user set it).
  EnvMap common;
  /// The variables that differ per local rank (RANK, LOCAL_RANK, ROLE_RANK), by local rank.
  std::vector<EnvMap> per_worker;
  /// Names the user had set, left as they were.
  std::vector<std::string> kept_from_user;
  /// DeepSpeed hostfile lines, `<host> slots=<nproc>` in node-rank order.
  std::vector<std::string> hostfile_lines;
  /// .deepspeed_env lines, KEY=VALUE, the NCCL variables other nodes' launchers must export.
  std::vector<std::string> deepspeed_env_lines;
};

/// The interface NCCL bootstraps over: the one that reached rank 0 when boot.json lists none or
/// lists it, else the first listed one this host has (`exists` checks), else the reached one.
std::string choose_socket_interface(const std::vector<std::string>& candidates,
                                    const std::string& reached,
                                    const std::function<bool(const std::string&)>& exists);

/// Builds the environment. `user` is mlenv-boot's own environment: NCCL and OpenMP settings found
/// there win; torchrun's rank variables are always set (a PyTorchJob's RANK is a node rank).
/// `nccl_needs_gid_index` is true when the NCCL built against predates dynamic GID choice (2.21).
NodeEnvironment build_environment(const BootConfig& config, const JobPlan& plan, int node_rank,
                                  const ProbeResult& probe, const std::string& socket_interface,
                                  const EnvMap& user, bool nccl_needs_gid_index = false);

/// The complete environment of one worker: the user's, plus common, plus its own variables.
EnvMap worker_environment(const EnvMap& user, const NodeEnvironment& env, int local_rank);

/// Writes the hostfile and .deepspeed_env where boot.json says, creating their folders; a path
/// that cannot be written is a warning, since torchrun-style launches do not need them.
void write_job_files(const BootConfig& config, const NodeEnvironment& env);

/// The `export NAME='value'` lines (sorted, single quotes escaped) a login shell sources to see
/// the job: every NCCL_* variable decided, MASTER_ADDR, MASTER_PORT, WORLD_SIZE, NNODES,
/// NODE_RANK, NPROC_PER_NODE and MLENV_TRANSPORT.
std::vector<std::string> shell_env_lines(const NodeEnvironment& env, const JobPlan& plan,
                                         int node_rank);

/// Writes the shell_env file atomically with mode 0644, creating its folders; a failure is a
/// warning, since the job itself does not read it.
void write_shell_env(const std::string& path, const std::vector<std::string>& lines);

/// The environment part of the dry-run plan.
Json environment_to_json(const NodeEnvironment& env);

}  // namespace boot
