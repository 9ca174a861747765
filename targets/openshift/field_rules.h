#pragma once
// OpenShift's check-time rules (compiler/check/platform_rules.h): kube's, its SCC, and the
// registry its builds do not use.

#include "compiler/check/platform_rules.h"

namespace mlenv::target {

/// The rules of OpenShift clusters' envs, which openshift_provider() gives.
const check::PlatformRules& openshift_rules();

}  // namespace mlenv::target
