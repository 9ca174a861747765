#pragma once
// Phase 1, identity: which node this is and how many nodes the job has.

#include <optional>
#include <string>

#include "config.h"
#include "process_env.h"

namespace boot {

/// What identity is derived from: flags, the environment and the hostname.
struct IdentityInputs {
  std::optional<int> flag_node_rank;
  std::optional<int> flag_nnodes;
  int config_nnodes = 1;
  RankSource rank;  ///< boot.json's `rank`: where the target said the rank is
  EnvMap env;
  std::string hostname;
};

/// This node's place in the job, and where the rank came from (it is always logged).
struct Identity {
  int node_rank = 0;
  int nnodes = 1;
  std::string rank_source;    ///< e.g. "--node-rank", "PET_NODE_RANK", "hostname ordinal (x-3)"
  std::string nnodes_source;  ///< "--nnodes" or "boot.json"
};

/// Node rank from --node-rank, else from boot.json's `rank`: the environment variable it names
/// (JOB_COMPLETION_INDEX, SLURM_NODEID), or the hostname's trailing "-<n>". nnodes from --nnodes
/// or boot.json, never guessed. Throws BootError(kExitConfigError) when the source is missing
/// or holds no rank.
Identity resolve_identity(const IdentityInputs& inputs);

/// The trailing "-<digits>" of a StatefulSet pod hostname (`train-3` gives 3).
std::optional<int> hostname_ordinal(const std::string& hostname);

}  // namespace boot
