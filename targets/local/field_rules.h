#pragma once
// The local platform's check-time rules (compiler/check/platform_rules.h): processes of this
// machine, which need nothing of the cluster but its `api`.

#include "compiler/check/platform_rules.h"

namespace mlenv::target {

/// The rules of local clusters' envs, which local_provider() gives.
const check::PlatformRules& local_rules();

}  // namespace mlenv::target
