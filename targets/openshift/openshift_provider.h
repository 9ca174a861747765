#pragma once
// The OpenShift provider (`platform = openshift`), listed in targets/registry.cc.

#include "targets/provider.h"

namespace mlenv::target {

/// The provider of OpenShift envs: kube's change semantics and drivers, OpenShift's renderer.
const Provider& openshift_provider();

}  // namespace mlenv::target
