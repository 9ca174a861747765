#pragma once
// The Kubernetes provider (`platform = kubernetes`), listed in platforms/registry.cc.

#include "platforms/provider.h"

namespace mlenv::platforms {

/// The provider of Kubernetes envs: kube's change semantics and drivers, Kubernetes's renderer.
const Provider& kubernetes_provider();

}  // namespace mlenv::platforms
