#include "platforms/kube/kube_provider.h"

#include <algorithm>
#include <map>
#include <optional>

#include "compiler/plan/change.h"
#include "compiler/plan/plan_json.h"
#include "compiler/plan/plan_tree.h"
#include "platforms/kube/builders.h"

#include "platforms/kube/day2/driver.h"
#include "platforms/kube/kube_apply.h"
#include "platforms/kube/replace_rules.h"

namespace mlenv::platforms {

bool KubeProvider::is_run_kind(std::string_view kind) const {
  return plan::is_run_kind(kind);
}

std::string KubeProvider::replace_reason(std::string_view kind, std::string_view path,
                                         const std::map<std::string, std::string>&) const {
  return plan::replace_reason(kind, path);
}

namespace {

// Whether any changed field of `change` lies under `prefix`, or names `needle` when set.
bool touches(const plan::Change& change, std::string_view prefix, std::string_view needle = {}) {
  return std::any_of(change.fields.begin(), change.fields.end(), [&](const plan::FieldChange& f) {
    return f.path.starts_with(prefix) &&
           (needle.empty() || f.path.find(needle) != std::string::npos);
  });
}

// Whether apply builds the env's image (plan.json has a build or push action).
bool builds_image(const plan::PlanManifest& plan) {
  return std::any_of(plan.actions.begin(), plan.actions.end(), [](const plan::PlanAction& a) {
    return a.action == "build" || a.action == "push";
  });
}

// Whether apply runs the built image by its digest (the build action names the image the
// workloads reference, compiler/apply/steps.cc): a rebuild then changes the pod template of
// every workload of the env, so a StatefulSet's pods roll.
bool runs_built_digest(const plan::PlanManifest& plan) {
  return std::any_of(plan.actions.begin(), plan.actions.end(), [](const plan::PlanAction& a) {
    return a.action == "build" && !a.image.empty();
  });
}

// Whether the mlenv-boot sources every image copies in (`_runtime/`) differ: apply then
// rebuilds every image, as for a changed Dockerfile (compiler/apply/steps.cc).
bool runtime_changed(const plan::PlanTree& before, const plan::PlanTree& after) {
  auto runtime = [](const plan::PlanTree& tree) {
    std::map<std::string, plan::BlobId> out;
    for (const auto& [path, entry] : tree.entries()) {
      if (path.starts_with("_runtime/")) out.emplace(path, entry.id);
    }
    return out;
  };
  return runtime(before) != runtime(after);
}

}  // namespace

void KubeProvider::diff_unit(const plan::PlanTree& before, const plan::PlanTree& after,
                             const std::string& unit, const std::vector<std::string>& paths,
                             plan::PlanDiff& diff) const {
  const std::string prefix = unit + "/";
  // The pods a changed template restarts: the differ's changes of this unit are the last.
  std::size_t first = diff.changes.size();
  while (first > 0 && diff.changes[first - 1].address.starts_with(prefix)) --first;
  for (std::size_t i = first; i < diff.changes.size(); ++i) {
    plan::Change& change = diff.changes[i];
    const bool boot = touches(change, "spec.template", target::kube::kBootConfigAnnotation);
    if (change.action == plan::Action::Update && change.kind == "StatefulSet" &&
        touches(change, "spec.template")) {
      change.notes.push_back(boot ? "rolls the pods: boot.json changed (mlenv-boot reads it once)"
                                  : "rolls the pods: the pod template changed");
    } else if (change.action == plan::Action::Replace && is_run_kind(change.kind) && boot) {
      change.notes.push_back("a new run: boot.json changed (mlenv-boot reads it once)");
    }
  }
  // A rebuilt image is a new run: apply deletes and re-creates every run of the env, which
  // runs the image by its new digest (compiler/apply/steps.cc), so the plan says so. A dev
  // env's StatefulSet run by digest rolls its pods onto the new image.
  const std::string plan_json = prefix + "plan.json";
  const bool dockerfile =
      std::find(paths.begin(), paths.end(), prefix + "Dockerfile") != paths.end();
  if (!dockerfile && !runtime_changed(before, after)) return;
  if (before.find(plan_json) == nullptr) return;
  std::optional<std::string> text = after.read(plan_json);
  std::string error;
  std::optional<plan::PlanManifest> plan =
      text ? plan::parse_plan_json(*text, error) : std::nullopt;
  if (!plan || !builds_image(*plan)) return;
  const std::string why = dockerfile ? "its image is rebuilt: the Dockerfile changed"
                                     : "its image is rebuilt: mlenv-boot's sources changed";
  for (const plan::PlanObject& object : plan->objects) {
    const bool run = is_run_kind(object.kind);
    if (!run && !(object.kind == "StatefulSet" && runs_built_digest(*plan))) continue;
    const std::string address = prefix + object.address;
    auto it =
        std::find_if(diff.changes.begin() + static_cast<std::ptrdiff_t>(first), diff.changes.end(),
                     [&](const plan::Change& c) { return c.address == address; });
    if (it == diff.changes.end()) {
      plan::Change change;
      change.address = address;
      change.kind = object.kind;
      change.action = run ? plan::Action::Replace : plan::Action::Update;
      if (run) change.reason = why;
      if (!run) change.notes.push_back("rolls the pods: " + why);
      change.file = prefix + object.file;
      diff.changes.push_back(std::move(change));
    } else if (it->action == plan::Action::Replace) {
      it->notes.push_back(why);
    } else if (run) {
      it->action = plan::Action::Replace;
      it->reason = why;
    } else if (std::none_of(it->notes.begin(), it->notes.end(),
                            [](const std::string& n) { return n.starts_with("rolls the pods"); })) {
      it->notes.push_back("rolls the pods: " + why);
    }
  }
}

const plan::ApplyDriver& KubeProvider::apply() const {
  static const plan::KubeApplyDriver driver;
  return driver;
}

const plan::day2::Day2Driver& KubeProvider::day2() const {
  static const plan::day2::KubeDay2Driver driver;
  return driver;
}

}  // namespace mlenv::platforms
