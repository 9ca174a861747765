#pragma once
// The local target (`platform = local`): every env runs on this machine, its nodes as local
// processes that meet on loopback, so a multi-node job can be tried on a workstation
// (targets/README.md, "Local").

#include "targets/target.h"

namespace mlenv::target::local {

class LocalTarget : public Target {
 public:
  std::string_view name() const override { return ir::platform_name(ir::Platform::local); }
  Output render(const ir::Program& program, Diagnostics& diagnostics, Scope scope) const override;
  std::vector<std::string> check(const ir::Program& program,
                                 Diagnostics& diagnostics) const override;
};

/// The env directory's git-ignored folder of the running env: each rank's pid, exit status
/// and log, and the job token.
inline constexpr const char* kRunDir = "run";

/// The variable each node's mlenv-boot reads its rank from (boot.json `rank.env`): apply sets
/// it per process.
inline constexpr const char* kRankVariable = "MLENV_NODE_RANK";

}  // namespace mlenv::target::local
