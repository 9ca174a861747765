#pragma once
// Shared objects in a plan: every env of a namespace holds a byte-identical copy of the objects
// its cluster names (an SR-IOV rail's NetworkAttachmentDefinition, the cluster's
// ServiceAccount), because each env directory is a kustomization of its own. A reviewer sees
// each once, under its cluster, and never as deleted while an env keeps it.

#include "compiler/plan/change.h"
#include "compiler/plan/plan_tree.h"

namespace mlenv::plan {

/// Replaces the per-env changes of shared objects (Change::shared) by one change each at
/// `<cluster>/_shared/<Kind>/<name>`: an update or replace of any copy; a create when no env
/// held it before; a delete when no env holds it after. Copies that only appear or leave with
/// an env are dropped. `others` holds the envs of other programs, which keep their copies.
void collapse_shared(const PlanTree& before, const PlanTree& after, const PlanTree& others,
                     PlanDiff& diff);

/// `<cluster>/_shared/<Kind>/<name>` for the object `<cluster>/<env>/<Kind>/<name>`.
std::string shared_address(const std::string& env_address);

}  // namespace mlenv::plan
