#pragma once
// A run on Kubernetes is a JobSet (jobset.x-k8s.io/v1alpha2, kubernetes-sigs/jobset): one
// replicated Indexed Job of the run's nodes (kube's indexed_job_spec), restarted as a gang.

#include <map>
#include <string>

#include "platforms/common/env_layout.h"
#include "platforms/common/object.h"
#include "platforms/kube/builders.h"

namespace mlenv::target::kube {

/// The replicated job of a run's JobSet: its pods are `<jobset>-node-0-<rank>`.
inline constexpr const char* kJobSetReplicatedJob = "node";
/// The JobSet of a run on Kubernetes: one replicated Indexed Job of `nodes` pods with DNS
/// hostnames, restarted as a gang `restarts` times; `labels` on the JobSet (Kueue's queue and
/// priority go there).
Object jobset(const EnvLayout& layout, const PodExtras& extras,
              const std::map<std::string, std::string>& labels);
/// Rank 0's DNS name in a run's JobSet.
std::string jobset_rank0_host(const EnvLayout& layout);

}  // namespace mlenv::target::kube
