#include "targets/kube/kube_provider.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "compiler/plan/change.h"
#include "compiler/plan/plan_tree.h"
#include "targets/common/plan_json.h"
#include "targets/kube/builders.h"
#include "targets/kube/day2/cluster_json.h"

#include "targets/kube/day2/driver.h"
#include "targets/kube/kube_apply.h"
#include "targets/kube/replace_rules.h"
#include "targets/unit_run.h"

namespace mlenv::target {

bool KubeProvider::is_run_kind(std::string_view kind) const {
  return kind == target::kube::kIndexedJobRun.kind || kind == run().kind;
}

std::string KubeProvider::replace_reason(std::string_view kind, std::string_view path,
                                         const std::map<std::string, std::string>&) const {
  return plan::replace_reason(kind, path, is_run_kind(kind));
}

std::vector<plan::Step> KubeProvider::grant_checks(const plan::PlanManifest&) const {
  return {};
}

std::string_view KubeProvider::plural(std::string_view) const {
  return {};
}

std::optional<std::vector<plan::day2::ExposedUrl>> KubeProvider::exposed_urls(
    const plan::day2::Session&, Diagnostics&) const {
  return std::vector<plan::day2::ExposedUrl>{};
}

void KubeProvider::print_build(std::ostream&, const plan::day2::Session&) const {}

void KubeProvider::print_queue(std::ostream&, const plan::day2::Session&) const {}

std::vector<std::string> KubeProvider::queue_args(const plan::PlanObject&,
                                                  const std::string&) const {
  return {};
}

const KubeProvider& kube_provider(ir::Platform platform) {
  const auto* kube = dynamic_cast<const KubeProvider*>(&provider(platform));
  if (kube == nullptr)
    throw std::logic_error("platform " + std::string(ir::platform_name(platform)) +
                           " has no kube provider");
  return *kube;
}

void KubeProvider::add_implied_actions(const plan::PlanObject& object,
                                       std::vector<plan::PlanAction>& actions) const {
  if (object.kind != "StatefulSet") return;
  plan::PlanAction rollout;
  rollout.action = "rollout";
  rollout.after = object.address;
  actions.push_back(std::move(rollout));
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

// A change of `object` (at `address`) that only its image makes: no field of its file changes.
plan::Change workload_change(const plan::PlanObject& object, const std::string& address,
                             plan::Action action) {
  plan::Change change;
  change.address = address;
  change.kind = object.kind;
  change.action = action;
  change.file = address.substr(0, address.size() - object.address.size()) + object.file;
  return change;
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
  // The image the env runs, which the envs that run it share: built when no env of the
  // cluster ran it before, built again when its Dockerfile or mlenv-boot's `_runtime/` sources
  // changed; the plan lists it once (unit_run.h). Apply then runs it by its new digest
  // (apply/steps.cc), so a rebuild replaces every run of the env and rolls its dev env.
  const std::string cause = image_rebuild_cause(before, after, unit, paths, diff);
  const bool created = before.find(prefix + "plan.json") == nullptr;
  if (cause.empty() && !created) return;
  std::optional<std::string> text = after.read(prefix + "plan.json");
  const std::string image = text ? planned_image(*text) : "";
  if (image.empty()) return;
  add_image_change(before, unit, image, cause, diff);
  if (cause.empty()) return;
  std::string error;
  std::optional<plan::PlanManifest> plan = plan::parse_plan_json(*text, error);
  if (!plan || !builds_image(*plan)) return;
  for (const plan::PlanObject& object : plan->objects) {
    const bool run = is_run_kind(object.kind);
    if (!run && object.kind != "StatefulSet") continue;
    const std::string address = prefix + object.address;
    auto it =
        std::find_if(diff.changes.begin() + static_cast<std::ptrdiff_t>(first), diff.changes.end(),
                     [&](const plan::Change& c) { return c.address == address; });
    if (!run) {
      if (it == diff.changes.end()) {
        diff.changes.push_back(workload_change(object, address, plan::Action::Update));
        it = diff.changes.end() - 1;
      }
      if (it->action == plan::Action::Update)
        it->notes.push_back("rolls the pods: its image is rebuilt");
      continue;
    }
    const std::string why = "its image is rebuilt: " + cause;
    if (it == diff.changes.end()) {
      plan::Change replaced = workload_change(object, address, plan::Action::Replace);
      replaced.reason = why;
      diff.changes.push_back(std::move(replaced));
    } else if (it->action == plan::Action::Replace) {
      it->notes.push_back(why);
    } else if (it->action == plan::Action::Update) {
      it->action = plan::Action::Replace;
      it->reason = why;
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

}  // namespace mlenv::target
