#pragma once
// A run on Kubernetes is a JobSet (jobset.x-k8s.io/v1alpha2, kubernetes-sigs/jobset): one
// replicated Indexed Job of the run's nodes (kube's indexed_job_spec), restarted as a gang.

#include <map>
#include <string>

#include "targets/common/env_layout.h"
#include "targets/common/object.h"
#include "targets/kube/builders.h"
#include "targets/kube/run_workload.h"

namespace mlenv::target::kube {

/// The replicated job of a run's JobSet: its pods are `<jobset>-node-0-<rank>`.
inline constexpr const char* kJobSetReplicatedJob = "node";
/// A run on Kubernetes, as kube's apply, results and name rules ask of it. JobSetNameKey
/// (kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go) labels the JobSet's Jobs and
/// pods; its child Job is `<jobset>-node-0`, so `job-name=<jobset>` would find no pod. Pods
/// are `<jobset>-<replicated job>-<job index>-<pod index>-<5 random>`, and the JobSet webhook
/// refuses a JobSet whose longest such name passes 63 characters (pkg/webhooks/
/// jobset_webhook.go, ValidateCreate); hostnames are `<jobset>-<kJobSetReplicatedJob>-0-<rank>`. A
/// JobSet ends Completed or Failed (JobSetConditionType), which apply's wait reads as a Job's
/// Complete or Failed.
inline constexpr RunWorkload kJobSetRun = {"JobSet", "jobset", "jobset.sigs.k8s.io/jobset-name",
                                           "-node-0-", true};
/// The JobSet of a run on Kubernetes: one replicated Indexed Job of `nodes` pods with DNS
/// hostnames, restarted as a gang `restarts` times; `labels` on the JobSet (Kueue's queue and
/// priority go there).
Object jobset(const EnvLayout& layout, const PodExtras& extras,
              const std::map<std::string, std::string>& labels);
/// Rank 0's DNS name in a run's JobSet.
std::string jobset_rank0_host(const EnvLayout& layout);

}  // namespace mlenv::target::kube
