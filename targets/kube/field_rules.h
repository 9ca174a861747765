#pragma once
// The check-time rules OpenShift and Kubernetes share (compiler/check/platform_rules.h): their
// envs are pods in a namespace that mount claims and run an image.

#include <vector>

#include "compiler/check/platform_rules.h"

namespace mlenv::target {

/// The fields of a kube cluster and env that a host platform has not: its namespace, its
/// storage (the claims) and the pods' ServiceAccount.
std::vector<check::PlatformField> kube_fields();

/// E0419: what every kube env needs: the cluster's namespace and storage, and an image.
void check_kube_needs(const check::PlatformEnv& env, check::PlatformReport& report);

}  // namespace mlenv::target
