#pragma once
// Phase 7a, what to start on this node: the command as nproc_per_node workers with torchrun's
// environment, or once as a launcher (torchrun, deepspeed, accelerate) with node-level arguments
// inserted (runtime/BOOT_CONFIG.md "Launchers"); the services on node rank 0 only.

#include <string>
#include <vector>

#include "config.h"
#include "environment.h"
#include "plan.h"
#include "process_env.h"
#include "supervisor.h"

namespace boot {

/// The node-level facts a launcher is told on its command line.
struct NodeShape {
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr;
  int master_port = 0;
  int nproc_per_node = 1;
  std::string hostfile;  ///< the DeepSpeed hostfile this node wrote, "" when none
};

/// How many leading words of `command` are the launcher itself: 1 for `torchrun` and
/// `deepspeed`, 3 for `python -m torch.distributed.run`, 2 for `accelerate launch`.
size_t launcher_prefix_length(const std::string& launcher, const std::vector<std::string>& command);

/// The launcher's argv: `command` with the node-level arguments inserted after its first
/// `prefix_words` words (boot.json's `launcher_words`: wrappers such as `env X=1` or `uv run`
/// and the launcher's own words), or, when 0, after `launcher_prefix_length`'s.
std::vector<std::string> launcher_argv(const std::string& launcher,
                                       const std::vector<std::string>& command,
                                       const NodeShape& shape, size_t prefix_words = 0);

/// A launcher's environment: the user's and the common one (NCCL and tuning variables), plus
/// MASTER_ADDR, MASTER_PORT, NNODES and NODE_RANK; none of the per-worker variables (RANK,
/// LOCAL_RANK, WORLD_SIZE, ...), which the launcher sets for the workers it starts.
EnvMap launcher_environment(const EnvMap& user, const NodeEnvironment& env, const NodeShape& shape);

/// Everything this node starts. `launcher` is "" when `command` is a per-worker program.
LaunchSpec plan_launch(const BootConfig& config, const std::vector<std::string>& command,
                       const std::string& launcher, const JobPlan& plan, int node_rank,
                       const EnvMap& user, const NodeEnvironment& env);

}  // namespace boot
