#pragma once
// The Slurm provider (`platform = slurm`), listed in targets/registry.cc.

#include "targets/provider.h"

namespace mlenv::target {

/// The provider of Slurm envs: batch jobs run by mlenv-boot under srun.
const Provider& slurm_provider();

}  // namespace mlenv::target
