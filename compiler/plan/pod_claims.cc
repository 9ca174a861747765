#include "compiler/plan/pod_claims.h"

#include <yaml-cpp/yaml.h>

namespace mlenv::plan {
namespace {

// `<cluster>/<env>` of an address `<cluster>/<env>/<Kind>/<name>`.
std::string unit_of_address(const std::string& address) {
  return address.substr(0, address.find('/', address.find('/') + 1));
}

// Joins claim names for a note: `a`, `b` and `c`.
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

// The claims the pods of a StatefulSet deleted from `file` leave: kept.
void add_left_claims(const std::string& unit, const std::string& file, const PodClaims& claims,
                     PlanDiff& diff) {
  for (const std::string& name : claim_names(claims, 0, claims.replicas)) {
    Change claim;
    claim.address = unit + "/PersistentVolumeClaim/" + name;
    claim.kind = "PersistentVolumeClaim";
    claim.action = Action::Keep;
    claim.file = file;
    claim.notes.push_back("a claim of StatefulSet/" + claims.statefulset +
                          "'s pods, which deleting it leaves (whenDeleted: Retain)");
    diff.changes.push_back(std::move(claim));
  }
}

}  // namespace

std::optional<PodClaims> pod_claims_of(const std::string& yaml) {
  try {
    for (const YAML::Node& doc : YAML::LoadAll(yaml)) {
      if (!doc.IsMap() || !doc["kind"] || doc["kind"].as<std::string>() != "StatefulSet") continue;
      PodClaims out;
      out.statefulset = doc["metadata"]["name"].as<std::string>("");
      const YAML::Node spec = doc["spec"];
      if (!spec || !spec.IsMap()) return std::nullopt;
      if (spec["replicas"]) out.replicas = spec["replicas"].as<int>();
      if (const YAML::Node templates = spec["volumeClaimTemplates"]; templates) {
        for (const YAML::Node& item : templates)
          out.templates.push_back(item["metadata"]["name"].as<std::string>());
      }
      if (out.templates.empty() || out.statefulset.empty()) return std::nullopt;
      return out;
    }
  } catch (const YAML::Exception&) {
    // An unreadable StatefulSet has no claims to name; the differ reports its file.
  }
  return std::nullopt;
}

std::vector<std::string> claim_names(const PodClaims& claims, int from, int to) {
  std::vector<std::string> out;
  for (int ordinal = to - 1; ordinal >= from; --ordinal) {
    for (auto it = claims.templates.rbegin(); it != claims.templates.rend(); ++it)
      out.push_back(*it + "-" + claims.statefulset + "-" + std::to_string(ordinal));
  }
  return out;
}

void add_pod_claim_changes(const PlanTree& before, const PlanTree& after, PlanDiff& diff) {
  const std::size_t count = diff.changes.size();
  for (std::size_t i = 0; i < count; ++i) {
    const Change change = diff.changes[i];  // a copy: claims are added to diff.changes
    if (change.kind != "StatefulSet" || change.action == Action::Create) continue;
    std::optional<std::string> old_yaml = before.read(change.file);
    std::optional<PodClaims> was = old_yaml ? pod_claims_of(*old_yaml) : std::nullopt;
    if (!was) continue;
    if (change.action == Action::Delete) {
      add_left_claims(unit_of_address(change.address), change.file, *was, diff);
      continue;
    }
    std::optional<std::string> new_yaml = after.read(change.file);
    std::optional<PodClaims> now = new_yaml ? pod_claims_of(*new_yaml) : std::nullopt;
    if (!now || now->replicas >= was->replicas) continue;
    std::vector<std::string> kept = claim_names(*was, now->replicas, was->replicas);
    diff.changes[i].notes.push_back("scaling down from " + std::to_string(was->replicas) + " to " +
                                    std::to_string(now->replicas) + " pods leaves the claims " +
                                    listed({kept.rbegin(), kept.rend()}) +
                                    " with their data (whenScaled: Retain); apply keeps them");
  }
}

}  // namespace mlenv::plan
