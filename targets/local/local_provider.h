#pragma once
// The local provider (`platform = local`), listed in targets/registry.cc.

#include "targets/provider.h"

namespace mlenv::target {

/// The provider of local envs: each node one mlenv-boot process of this machine, on loopback.
const Provider& local_provider();

}  // namespace mlenv::target
