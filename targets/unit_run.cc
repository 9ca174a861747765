#include "targets/unit_run.h"

#include <algorithm>

#include "compiler/apply/image_builder.h"
#include "targets/common/plan_json.h"

namespace mlenv::target {

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

std::string planned_image(std::string_view text) {
  // The writer puts no `image` before the actions (targets/common/plan_json.cc), and a
  // first plan of a fleet reads every env's plan.json: no document parse.
  return plan::plan_json_string(text, "image");
}

namespace {

// Whether a unit of `unit`'s cluster in `tree` runs `image`: `unit` itself first (an env
// mostly keeps its image), then the others.
bool cluster_runs(const plan::PlanTree& tree, const std::string& unit, const std::string& image) {
  auto runs = [&](const std::string& plan_json) {
    std::optional<std::string> text = tree.read(plan_json);
    return text && planned_image(*text) == image;
  };
  if (runs(unit + "/plan.json")) return true;
  const std::string cluster = unit.substr(0, unit.find('/') + 1);
  for (auto it = tree.entries().lower_bound(cluster);
       it != tree.entries().end() && it->first.starts_with(cluster); ++it) {
    const std::string& path = it->first;
    if (path.ends_with("/plan.json") && path.find('/', cluster.size()) + 10 == path.size() &&
        runs(path))
      return true;
  }
  return false;
}

}  // namespace

void add_image_change(const plan::PlanTree& before, const std::string& unit,
                      const std::string& image, const std::string& cause, plan::PlanDiff& diff) {
  const std::string repository = plan::image_repository(image);
  plan::Change change;
  change.kind = "Image";
  change.address = unit.substr(0, unit.find('/')) + "/_shared/Image/" +
                   repository.substr(repository.rfind('/') + 1);
  change.file = unit + "/Dockerfile";
  if (!cluster_runs(before, unit, image)) {
    change.action = plan::Action::Create;
    change.notes.push_back("build image " + image);
  } else if (!cause.empty()) {
    change.action = plan::Action::Update;
    change.notes.push_back("rebuild image " + image + ": " + cause);
  } else {
    return;
  }
  diff.changes.push_back(std::move(change));
}

}  // namespace mlenv::target
