#pragma once
// Platforms whose env has no objects (a batch job, local processes) show what apply runs for it
// as one change of its own; the rule for that change is the same everywhere, so it lives here.

#include <string>
#include <string_view>
#include <vector>

#include "compiler/plan/change.h"
#include "compiler/plan/plan_tree.h"

namespace mlenv::target {

/// What a unit's run looks like in the plan: its address `<unit>/<kind>/<env>` and the file it
/// runs from (relative to the unit), and why a changed run is replaced.
struct UnitRun {
  std::string kind;    ///< the run's kind in its address ("LocalRun")
  std::string file;    ///< the file the run starts from ("boot.json")
  std::string reason;  ///< shown on a replace
};

/// Adds to `diff` the change of unit `unit`'s run: created with the env, deleted when it
/// leaves, replaced when one of its files other than plan.json changed (`paths`: the unit's
/// changed files); plan.json alone (input digests) changes nothing that runs.
void diff_unit_run(const plan::PlanTree& before, const plan::PlanTree& after,
                   const std::string& unit, const std::vector<std::string>& paths,
                   const UnitRun& run, plan::PlanDiff& diff);

/// Why the image unit `unit` builds (its plan.json's action `image`, "" for none) is built
/// again, or "" when it is not: its Dockerfile is among `paths`, or a file of `_runtime/`
/// changed (`diff.runtime_changed`: mlenv-boot's sources are in every image). Only for a unit
/// planned before and after.
std::string image_rebuild_cause(const plan::PlanTree& before, const plan::PlanTree& after,
                                const std::string& unit, const std::vector<std::string>& paths,
                                const plan::PlanDiff& diff);

/// The image the plan.json `text` builds (its first action's `image`), "" for none.
std::string planned_image(std::string_view text);

/// Adds the plan's line of the image `image` that unit `unit` runs, at the address the envs
/// that run it share (the differ keeps the first of them): `+ <cluster>/_shared/Image/<name>`
/// noting `build image <image>` when no unit of the cluster ran it in `before`, else `~`
/// noting `rebuild image <image>: <cause>` when `cause` is not empty (image_rebuild_cause);
/// nothing otherwise.
void add_image_change(const plan::PlanTree& before, const std::string& unit,
                      const std::string& image, const std::string& cause, plan::PlanDiff& diff);

}  // namespace mlenv::target
