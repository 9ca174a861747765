#include "targets/kube/day2/cluster_json.h"

#include "compiler/apply/record_values.h"
#include "compiler/diag/render.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

namespace mlenv::plan::day2 {
namespace cluster_json {

// The member `key` of a map, or nullopt. yaml-cpp answers a missing key of a const node with
// an invalid node that throws when asked anything but IsDefined(), so every step is checked.
std::optional<YAML::Node> member(const YAML::Node& node, const char* key) {
  if (!node.IsMap()) return std::nullopt;
  YAML::Node value = node[key];
  if (!value.IsDefined()) return std::nullopt;
  return value;
}

// The node at `path` below `node`, or nullopt when any step is missing or not a map.
std::optional<YAML::Node> node_at(const YAML::Node& node, std::initializer_list<const char*> path) {
  std::optional<YAML::Node> at = node;
  for (const char* key : path) {
    std::optional<YAML::Node> next = member(*at, key);
    if (!next) return std::nullopt;
    // emplace, not assignment: YAML::Node's operator= would overwrite the document's node.
    at.emplace(*next);
  }
  return at;
}

// The scalar at `path` below `node` as text, "" when absent or not a scalar.
std::string text_at(const YAML::Node& node, std::initializer_list<const char*> path) {
  std::optional<YAML::Node> at = node_at(node, path);
  return at && at->IsScalar() ? at->Scalar() : std::string();
}

// A non-negative decimal of at most 7 digits (more ranks than any cluster has nodes), or -1.
int small_number(const std::string& text) {
  if (text.empty() || text.size() > 7) return -1;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

// The `items` of a `get ... -o json` List; throws when there is none.
YAML::Node items_of(const std::string& json) {
  std::optional<YAML::Node> items = member(YAML::Load(json), "items");
  if (!items || !items->IsSequence())
    throw std::runtime_error("the client's output is not a JSON list of objects");
  return *items;
}

}  // namespace cluster_json

namespace {

using namespace cluster_json;

// The rank of a pod of `workload`, or -1 when it is not one of its ranks.
int rank_of(const YAML::Node& pod, const std::string& workload) {
  // Indexed Job pods: the completion index, as a label (Kubernetes 1.28+) or annotation.
  constexpr const char* kIndex = "batch.kubernetes.io/job-completion-index";
  std::string index = text_at(pod, {"metadata", "labels", kIndex});
  if (index.empty()) index = text_at(pod, {"metadata", "annotations", kIndex});
  if (index.empty()) index = text_at(pod, {"metadata", "labels", "apps.kubernetes.io/pod-index"});
  if (!index.empty()) return small_number(index);
  // StatefulSet pods are named `<statefulset>-<ordinal>`.
  std::string name = text_at(pod, {"metadata", "name"});
  if (!name.starts_with(workload + "-")) return -1;
  return small_number(name.substr(workload.size() + 1));
}

// The status of container `name` of a pod, or nullopt.
std::optional<YAML::Node> container_status(const YAML::Node& pod, const char* name) {
  std::optional<YAML::Node> list = node_at(pod, {"status", "containerStatuses"});
  if (!list || !list->IsSequence()) return std::nullopt;
  for (const YAML::Node& c : *list) {
    if (text_at(c, {"name"}) == name) return c;
  }
  return std::nullopt;
}

RankPod rank_pod(const YAML::Node& pod, int rank) {
  RankPod out;
  out.rank = rank;
  out.name = text_at(pod, {"metadata", "name"});
  out.node = text_at(pod, {"spec", "nodeName"});
  out.created = text_at(pod, {"metadata", "creationTimestamp"});
  out.phase = text_at(pod, {"status", "phase"});
  if (std::optional<YAML::Node> main = container_status(pod, kMainContainer)) {
    out.restarts = std::max(0, small_number(text_at(*main, {"restartCount"})));
    // CrashLoopBackOff, ImagePullBackOff, ... say more than `Pending` or `Running`.
    if (std::string waiting = text_at(*main, {"state", "waiting", "reason"}); !waiting.empty())
      out.phase = waiting;
    out.running = out.phase == "Running" && node_at(*main, {"state", "running"}).has_value();
  }
  if (!text_at(pod, {"metadata", "deletionTimestamp"}).empty()) {
    out.phase = "Terminating";
    out.running = false;
  }
  if (out.phase.empty()) out.phase = "Unknown";
  return out;
}

}  // namespace

std::optional<std::vector<RankPod>> parse_rank_pods(const std::string& json,
                                                    const std::string& workload,
                                                    std::string& error) {
  try {
    std::map<int, RankPod> newest;
    for (const YAML::Node& pod : items_of(json)) {
      if (!pod.IsMap()) continue;
      int rank = rank_of(pod, workload);
      // The name becomes an argument of `logs`, `exec` and `port-forward`: never an option.
      if (rank < 0 || !is_object_name(text_at(pod, {"metadata", "name"}))) continue;
      RankPod candidate = rank_pod(pod, rank);
      auto it = newest.find(rank);
      if (it == newest.end() || it->second.created < candidate.created)
        newest[rank] = std::move(candidate);
    }
    std::vector<RankPod> out;
    for (auto& [rank, pod] : newest) out.push_back(std::move(pod));
    return out;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::optional<BootStatus> parse_boot_status(const std::string& json, std::string& error) {
  try {
    const YAML::Node root = YAML::Load(json);
    if (text_at(root, {"format_version"}) != "1")
      throw std::runtime_error("not a status file of format_version 1");
    BootStatus out;
    out.transport = text_at(root, {"transport"});
    out.transport_reason = text_at(root, {"transport_reason"});
    out.node_rank = small_number(text_at(root, {"node_rank"}));
    out.nnodes = std::max(0, small_number(text_at(root, {"nnodes"})));
    const YAML::Node exited = root["exited_services"];
    const bool listed = exited.IsDefined() && exited.IsSequence();  // absent before any exit
    for (std::size_t i = 0; listed && i < exited.size(); ++i) {
      out.exited_services.push_back(text_at(exited[i], {"name"}) + " exited with code " +
                                    text_at(exited[i], {"code"}));
    }
    return out;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::string parse_queued(const std::string& output) {
  std::vector<std::string> fields;
  const std::string line = output.substr(0, output.find('\n'));
  for (std::size_t at = 0; at <= line.size();) {
    const std::size_t tab = std::min(line.find('\t', at), line.size());
    fields.push_back(line.substr(at, tab - at));
    at = tab + 1;
  }
  if (fields.size() != 4 || fields[0].empty() || fields[1] == "True") return "";
  const std::string& reason = fields[2];
  const std::string& message = fields[3];
  std::string why = reason.empty() && message.empty() ? "not admitted yet" : printable(reason);
  if (!message.empty()) why += (reason.empty() ? "" : ": ") + printable(message);
  return "queued in `" + printable(fields[0]) + "`: " + why;
}

}  // namespace mlenv::plan::day2
