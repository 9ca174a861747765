#pragma once
// Compares two plans object by object. Files are compared by blob id first, so only changed
// files are read and parsed; a changed object is compared field by field.

#include "compiler/plan/change.h"
#include "compiler/plan/plan_tree.h"

namespace mlenv::plan {

/// What changes from `before` (the committed plan) to `after` (a fresh render). Objects are
/// found through each env's plan.json, and through their own kind and name in `_admin`.
PlanDiff diff_plans(const PlanTree& before, const PlanTree& after);

}  // namespace mlenv::plan
