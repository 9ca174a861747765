#pragma once
// Slurm's check-time rules (compiler/check/platform_rules.h): a batch job on the nodes' hosts,
// submitted with sbatch to a partition.

#include "compiler/check/platform_rules.h"

namespace mlenv::target {

/// The rules of Slurm clusters' envs, which slurm_provider() gives.
const check::PlatformRules& slurm_rules();

}  // namespace mlenv::target
