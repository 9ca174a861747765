#pragma once
// boot.json (runtime/BOOT_CONFIG.md, format version 3): mlenv-boot's configuration, the same
// for every platform but for where the rank and rank 0 come from, which the target says.

#include <string>

#include "targets/common/env_layout.h"

namespace mlenv::target {

/// Where mlenv-boot finds its rank and rank 0 (boot.json `rank` and `rendezvous`): the target
/// knows how its scheduler names pods and ranks them; the runtime assumes nothing.
struct BootPlacement {
  std::string rank_env;  ///< the variable holding the node rank; "" for the hostname's ordinal
  std::string rendezvous_host;      ///< rank 0's address, or "" when `rendezvous_host_env`
  std::string rendezvous_host_env;  ///< the variable holding rank 0's address
  /// mlenv-boot runs on a host, not in a container: there is no /workspace or /run/mlenv, so
  /// it writes no shell environment or `.deepspeed_env`, and a hostfile only where `hostfile`
  /// says (a Slurm env without image).
  bool on_host = false;
  /// Where each node writes the DeepSpeed hostfile (the launcher's `--hostfile`) and
  /// `.deepspeed_env`, when the target has a better place than the pod's own /run/mlenv.
  std::string hostfile{};
  std::string deepspeed_env{};
};

/// The boot.json document (runtime/BOOT_CONFIG.md, format version 3).
std::string boot_json(const EnvLayout& layout, const BootPlacement& placement);

}  // namespace mlenv::target
