// The local provider: envs render to boot.json (local_target.h) and run as processes of this
// machine that apply starts and stops (local_drivers.h, local_processes.h).

#include "platforms/local/local_provider.h"

#include <algorithm>

#include "compiler/plan/change.h"
#include "compiler/plan/plan_tree.h"
#include "platforms/local/local_drivers.h"
#include "platforms/local/local_target.h"

namespace mlenv::platforms {
namespace {

class LocalProvider : public Provider {
 public:
  ir::Platform platform() const override { return ir::Platform::local; }
  const target::Target& target() const override { return target_; }
  /// A local env has no objects; its run is its processes (diff_unit).
  bool is_run_kind(std::string_view) const override { return false; }
  std::string replace_reason(std::string_view, std::string_view,
                             const std::map<std::string, std::string>&) const override {
    return {};
  }
  void diff_unit(const plan::PlanTree& before, const plan::PlanTree& after, const std::string& unit,
                 const std::vector<std::string>& paths, plan::PlanDiff& diff) const override;
  const plan::ApplyDriver& apply() const override { return apply_; }
  const plan::day2::Day2Driver& day2() const override { return day2_; }

 private:
  target::local::LocalTarget target_;
  plan::LocalApplyDriver apply_;
  plan::day2::LocalDay2Driver day2_;
};

// The plan shows an env's processes as `<unit>/LocalRun/<env>`: started with the env, stopped
// when it leaves, and restarted when boot.json changed, because apply then stops the running
// nodes and starts new ones (local_apply.cc). plan.json alone (input digests) changes nothing
// that runs.
void LocalProvider::diff_unit(const plan::PlanTree& before, const plan::PlanTree& after,
                              const std::string& unit, const std::vector<std::string>& paths,
                              plan::PlanDiff& diff) const {
  const std::string plan_json = unit + "/plan.json";
  const bool had = before.find(plan_json) != nullptr;
  const bool has = after.find(plan_json) != nullptr;
  const bool changed = std::find_if(paths.begin(), paths.end(), [&](const std::string& path) {
                         return path != plan_json;
                       }) != paths.end();
  if (had && has && !changed) return;
  plan::Change run;
  run.address = unit + "/LocalRun/" + unit.substr(unit.rfind('/') + 1);
  run.kind = "LocalRun";
  run.file = unit + "/boot.json";
  run.action = !had ? plan::Action::Create : !has ? plan::Action::Delete : plan::Action::Replace;
  if (run.action == plan::Action::Replace) run.reason = "its nodes restart with the new config";
  diff.changes.push_back(std::move(run));
}

}  // namespace

const Provider& local_provider() {
  static const LocalProvider provider;
  return provider;
}

}  // namespace mlenv::platforms
