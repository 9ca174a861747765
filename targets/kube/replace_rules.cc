#include "targets/kube/replace_rules.h"

#include <array>

namespace mlenv::plan {
namespace {

// True when `path` is `field` or lies under it (`field.x`, `field[0]`).
bool under(std::string_view path, std::string_view field) {
  if (path.substr(0, field.size()) != field) return false;
  return path.size() == field.size() || path[field.size()] == '.' || path[field.size()] == '[';
}

// The top-level `spec.<field>` a path lies under ("spec.selector.matchLabels.app" ->
// "spec.selector").
std::string_view spec_field(std::string_view path) {
  if (path.substr(0, 5) != "spec." && path.substr(0, 5) != "spec[") return {};
  std::size_t end = path.find_first_of(".[", 5);
  return path.substr(0, end);
}

std::string cannot_change(std::string_view field, std::string_view kind) {
  return std::string(field) + " cannot change in place on a " + std::string(kind);
}

}  // namespace

std::string replace_reason(std::string_view kind, std::string_view path, bool run) {
  if (under(path, "metadata.namespace")) return "the object moves to another namespace";
  if (run && !under(path, "spec")) return {};
  if (kind == "StatefulSet") {
    // The API server allows only these spec fields to change on a StatefulSet.
    static constexpr std::array<std::string_view, 6> kMutable = {
        "spec.replicas",        "spec.template",
        "spec.updateStrategy",  "spec.persistentVolumeClaimRetentionPolicy",
        "spec.minReadySeconds", "spec.ordinals"};
    std::string_view field = spec_field(path);
    if (field.empty()) return {};
    for (std::string_view ok : kMutable) {
      if (field == ok) return {};
    }
    return cannot_change(field, kind);
  }
  if (kind == "PersistentVolumeClaim") {
    // Only a storage request may grow (and the class must allow expansion); the rest is fixed.
    std::string_view field = spec_field(path);
    if (field.empty() || field == "spec.resources") return {};
    return cannot_change(field, kind);
  }
  if (kind == "Service") {
    for (std::string_view field : {"spec.clusterIP", "spec.clusterIPs", "spec.type"}) {
      if (under(path, field)) return cannot_change(field, kind);
    }
    return {};
  }
  if (kind == "RoleBinding" || kind == "ClusterRoleBinding") {
    if (under(path, "roleRef")) return cannot_change("roleRef", kind);
    return {};
  }
  if (run && under(path, "spec.ttlSecondsAfterFinished")) {
    // The one field of a run that changes in place: kubernetes ValidateJobSpecUpdate
    // (pkg/apis/batch/validation/validation.go) leaves ttlSecondsAfterFinished mutable, and so
    // does the webhook of the Kubernetes platform's run kind (its ValidateUpdate refuses only
    // changes of the Job templates): the TTL controller reads the new value.
    return {};
  }
  if (run) {
    // A Job's pod template is immutable once created (the API server rejects updates of
    // spec.template: "field is immutable"; the Job templates of a workload of Jobs likewise),
    // and a run is one execution: any change to it is a new run, deleted and created again by
    // apply.
    return "run spec changed";
  }
  return {};
}

}  // namespace mlenv::plan
