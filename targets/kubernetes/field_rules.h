#pragma once
// Kubernetes' check-time rules (compiler/check/platform_rules.h): kube's, the registry its
// images are pushed to, and Kueue's queues.

#include "compiler/check/platform_rules.h"

namespace mlenv::target {

/// The rules of Kubernetes clusters' envs, which kubernetes_provider() gives.
const check::PlatformRules& kubernetes_rules();

}  // namespace mlenv::target
