#pragma once
// The claims a StatefulSet's volumeClaimTemplates give its pods (storage `per_pod`): one per
// template and pod, `<template>-<statefulset>-<ordinal>`. The target writes the retention
// policy Retain for deletion and scale-down, so they outlive the StatefulSet and its
// scale-downs with their data, and no plan.json lists them: the plan and apply name them here.

#include <optional>
#include <string>
#include <vector>

#include "compiler/plan/change.h"
#include "compiler/plan/plan_tree.h"

namespace mlenv::plan {

/// What a StatefulSet's pods claim.
struct PodClaims {
  std::string statefulset;             ///< its name
  std::vector<std::string> templates;  ///< volumeClaimTemplates' names, in order
  int replicas = 1;                    ///< spec.replicas (1 when unset)
};

/// The pod claims of the StatefulSet in `yaml`; nullopt when it is not one, has no claim
/// templates or is unreadable.
std::optional<PodClaims> pod_claims_of(const std::string& yaml);

/// The claims of the pods of ordinals `from` to `to - 1`, in the order they are deleted in:
/// the last ordinal first and, within one, the last template first.
std::vector<std::string> claim_names(const PodClaims& claims, int from, int to);

/// Adds to `diff` what its StatefulSet changes leave behind: a deleted StatefulSet's pod claims
/// as keeps of `<unit>/PersistentVolumeClaim/<claim>` (apply deletes them only with
/// --allow-destroy), and a note on a StatefulSet whose replicas go down naming
/// the claims its gone pods keep.
void add_pod_claim_changes(const PlanTree& before, const PlanTree& after, PlanDiff& diff);

}  // namespace mlenv::plan
