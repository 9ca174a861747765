#pragma once
// The Slurm target: every env becomes one batch script beside its boot.json; `srun` starts one
// mlenv-boot per node (targets/README.md, "Slurm").

#include "targets/target.h"

namespace mlenv::target::slurm {

class SlurmTarget : public Target {
 public:
  std::string_view name() const override { return ir::platform_name(ir::Platform::slurm); }
  Output render(const ir::Program& program, Diagnostics& diagnostics, Scope scope) const override;
  std::vector<std::string> check(const ir::Program& program,
                                 Diagnostics& diagnostics) const override;
};

/// The batch script's file name in the env directory: `<env>.sbatch`.
std::string script_name(const ir::Env& env);

/// Where the job's output and error files go, relative to the env directory.
inline constexpr const char* kLogsDir = "logs";

}  // namespace mlenv::target::slurm
