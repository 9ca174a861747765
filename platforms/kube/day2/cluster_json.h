#pragma once
// Parsers of what the day-2 commands read from the cluster: `get pods -o json`, `get routes -o
// json`, `get builds -o json` and mlenv-boot's status file. The cluster is not trusted: any
// shape a parser does not expect is an error (or a field left empty), never a crash.

#include <optional>
#include <string>
#include <vector>

namespace mlenv::plan::day2 {

/// The pod that runs one rank of an env.
struct RankPod {
  int rank = 0;
  std::string name;
  std::string node;      ///< spec.nodeName; "" while unscheduled
  std::string phase;     ///< status.phase, or the main container's waiting reason, or Terminating
  int restarts = 0;      ///< restartCount of the main container
  bool running = false;  ///< phase Running and the main container running: exec can reach it
  std::string created;   ///< metadata.creationTimestamp (RFC 3339, compares as text)
};

/// The main container of every pod mlenvc emits (platforms/kube/workload.cc).
inline constexpr const char* kMainContainer = "mlenv";

/// The rank pods of workload `workload` in a `get pods -o json` list, sorted by rank, one per
/// rank (the newest, when a Job replaced a failed pod). A pod's rank is its completion index
/// (label or annotation `batch.kubernetes.io/job-completion-index`: an Indexed Job), its
/// `apps.kubernetes.io/pod-index` label, or the N of its name `<workload>-N` (a StatefulSet);
/// other pods (a build's) are not ranks. Nullopt with `error` set when the JSON is not a list.
std::optional<std::vector<RankPod>> parse_rank_pods(const std::string& json,
                                                    const std::string& workload,
                                                    std::string& error);

/// One exposed URL: a Route's (or Ingress rule's) name and `https://host/path`.
struct ExposedUrl {
  std::string name;
  std::string url;
};

/// The URLs of a `get routes -o json` list, sorted by name: https when the Route has `tls`.
std::optional<std::vector<ExposedUrl>> parse_routes(const std::string& json, std::string& error);

/// The newest build of a `get builds -o json` list (highest `openshift.io/build.number`).
struct BuildState {
  std::string name;
  std::string phase;
};
std::optional<BuildState> parse_latest_build(const std::string& json, std::string& error);

/// What mlenv-boot published in its status file (runtime/BOOT_CONFIG.md, status.json).
struct BootStatus {
  std::string transport;  ///< "rdma" or "tcp"
  std::string transport_reason;
  int node_rank = -1;
  int nnodes = 0;
  /// "service jupyter exited with code 1", one per service that exited while the job ran.
  std::vector<std::string> exited_services;
};
std::optional<BootStatus> parse_boot_status(const std::string& json, std::string& error);

}  // namespace mlenv::plan::day2
