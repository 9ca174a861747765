#pragma once
// Parsers of what the day-2 commands read from the cluster: `get pods -o json` and mlenv-boot's
// status file, and the readers a platform's own parsers use (OpenShift's Routes and builds:
// targets/openshift/day2/). The cluster is not trusted: any shape a parser does not expect is
// an error (or a field left empty), never a crash.

#include <yaml-cpp/yaml.h>

#include <initializer_list>
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

/// The main container of every pod mlenvc emits (targets/kube/workload.cc).
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

/// Readers of the client's JSON (loaded with yaml-cpp) that never throw on a missing member.
namespace cluster_json {
/// The member `key` of a map, or nullopt.
std::optional<YAML::Node> member(const YAML::Node& node, const char* key);
/// The node at `path` below `node`, or nullopt when any step is missing or not a map.
std::optional<YAML::Node> node_at(const YAML::Node& node, std::initializer_list<const char*> path);
/// The scalar at `path` below `node` as text, "" when absent or not a scalar.
std::string text_at(const YAML::Node& node, std::initializer_list<const char*> path);
/// A non-negative decimal of at most 7 digits, or -1.
int small_number(const std::string& text);
/// The `items` of a `get ... -o json` List; throws std::runtime_error when there is none.
YAML::Node items_of(const std::string& json);
}  // namespace cluster_json

/// `queued in `<queue>`: <reason>: <message>` from a line of the queue, the status, reason
/// and message of the workload's quota reservation, tab-separated (the platform's queue_args
/// prints it), while the queue has reserved no quota for it; "" when it has, or when the output
/// is anything else.
std::string parse_queued(const std::string& output);

}  // namespace mlenv::plan::day2
