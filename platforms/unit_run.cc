#include "platforms/unit_run.h"

#include <algorithm>

#include "compiler/apply/image_builder.h"

namespace mlenv::platforms {

void diff_unit_run(const plan::PlanTree& before, const plan::PlanTree& after,
                   const std::string& unit, const std::vector<std::string>& paths,
                   const UnitRun& run, plan::PlanDiff& diff) {
  const std::string plan_json = unit + "/plan.json";
  const bool had = before.find(plan_json) != nullptr;
  const bool has = after.find(plan_json) != nullptr;
  const bool changed = std::any_of(paths.begin(), paths.end(),
                                   [&](const std::string& path) { return path != plan_json; });
  if (had && has && !changed) return;
  plan::Change change;
  change.address = unit + "/" + run.kind + "/" + unit.substr(unit.rfind('/') + 1);
  change.kind = run.kind;
  change.file = unit + "/" + run.file;
  change.action = !had ? plan::Action::Create : !has ? plan::Action::Delete : plan::Action::Replace;
  if (change.action == plan::Action::Replace) change.reason = run.reason;
  diff.changes.push_back(std::move(change));
}

std::string image_rebuild_cause(const plan::PlanTree& before, const plan::PlanTree& after,
                                const std::string& unit, const std::vector<std::string>& paths,
                                const plan::PlanDiff& diff) {
  const std::string plan_json = unit + "/plan.json";
  if (before.find(plan_json) == nullptr || after.find(plan_json) == nullptr) return "";
  if (std::find(paths.begin(), paths.end(), unit + "/Dockerfile") != paths.end())
    return "the Dockerfile changed";
  return diff.runtime_changed ? "mlenv-boot's sources (`_runtime/`) changed" : "";
}

plan::Change image_rebuild(const std::string& unit, const std::string& image,
                           const std::string& cause) {
  const std::string repository = plan::image_repository(image);
  plan::Change change;
  change.kind = "Image";
  change.address = unit + "/Image/" + repository.substr(repository.rfind('/') + 1);
  change.action = plan::Action::Update;
  change.file = unit + "/Dockerfile";
  change.notes.push_back("rebuild image " + image + ": " + cause);
  return change;
}

}  // namespace mlenv::platforms
