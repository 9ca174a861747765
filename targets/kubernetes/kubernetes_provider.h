#pragma once
// The Kubernetes provider (`platform = kubernetes`), listed in targets/registry.cc.

#include "targets/provider.h"

namespace mlenv::target {

/// The provider of Kubernetes envs: kube's change semantics and drivers, Kubernetes's renderer.
const Provider& kubernetes_provider();

}  // namespace mlenv::target
