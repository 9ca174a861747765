#pragma once
// What a run's workload is on the API server. The kube code that OpenShift and Kubernetes
// share (apply's steps, results, port-forward, the name rules) asks this instead of naming
// either platform's kind: each platform says what its runs are (its provider's `run()`).

#include <string>
#include <string_view>

namespace mlenv::target::kube {

/// The kind of a platform's runs and what finding their pods takes.
struct RunWorkload {
  std::string_view kind;        ///< the run's kind in plans and addresses (`Job`)
  std::string_view resource;    ///< kubectl's name of that kind (`kubectl get job`)
  std::string_view pods_label;  ///< the label whose value on each of the run's pods is its name
  /// What a pod's hostname puts between the run's name and the pod's rank (`trainer-1`: `-`).
  std::string_view hostname_infix;
  /// Whether admission refuses a run whose pod names, with the 5 random characters their
  /// controller appends, pass a DNS label's 63 characters (E0411).
  bool pod_name_limit = false;
};

/// A run as kube renders it: one Indexed Job of the run's nodes. The Job controller labels
/// each of its pods `job-name` (batch/v1) and names their hostnames `<job>-<index>`.
inline constexpr RunWorkload kIndexedJobRun = {"Job", "job", "job-name", "-", false};

/// The label selector of every pod of the run `name`.
inline std::string run_pods_selector(const RunWorkload& run, std::string_view name) {
  return std::string(run.pods_label) + "=" + std::string(name);
}

/// The label selector of rank 0's pod of the run `name`: the Job controller labels each pod of
/// an Indexed Job with its completion index, also in the Jobs a run's workload makes.
inline std::string rank0_selector(const RunWorkload& run, std::string_view name) {
  return run_pods_selector(run, name) + ",batch.kubernetes.io/job-completion-index=0";
}

}  // namespace mlenv::target::kube
