// The Slurm provider: envs are batch jobs (slurm_target.h), submitted and cancelled by apply
// (slurm_apply.h), asked about through Slurm's clients (slurm_env.h).

#include "targets/slurm/slurm_provider.h"

#include <algorithm>

#include "compiler/plan/change.h"
#include "compiler/plan/plan_tree.h"
#include "targets/common/plan_json.h"

#include "targets/slurm/field_rules.h"
#include "targets/slurm/slurm_apply.h"
#include "targets/slurm/slurm_env.h"
#include "targets/slurm/slurm_target.h"
#include "targets/unit_run.h"

namespace mlenv::target {
namespace {

class SlurmProvider : public Provider {
 public:
  ir::Platform platform() const override { return ir::Platform::slurm; }
  const target::Target& target() const override { return target_; }
  const check::PlatformRules& rules() const override { return slurm_rules(); }
  /// A Slurm env has no objects; its run is the job (diff_unit).
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
  target::slurm::SlurmTarget target_;
  plan::SlurmApplyDriver apply_;
  plan::day2::SlurmDay2Driver day2_;
};

// A Slurm env has no objects: its run is the job apply submits. The plan shows that job as
// `<unit>/SlurmJob/<env>`, created and deleted with the env and replaced when a file it runs
// from (script, boot.json, Dockerfile) changed, because apply then cancels the job and submits
// a new one (slurm_apply.cc). `paths` are the unit's changed files; plan.json alone (input
// digests) is not a change of the job.
void SlurmProvider::diff_unit(const plan::PlanTree& before, const plan::PlanTree& after,
                              const std::string& unit, const std::vector<std::string>& paths,
                              plan::PlanDiff& diff) const {
  const std::string env = unit.substr(unit.rfind('/') + 1);
  diff_unit_run(before, after, unit, paths, {"SlurmJob", env + ".sbatch", "run spec changed"},
                diff);
  // An image apply builds and imports or pushes (slurm_image.h), which the envs that run it share:
  // the plan lists it once, when no env of the cluster ran it before or when it is built again; the
  // job is submitted anew to run a rebuilt one, also when only `_runtime/` changed.
  const std::string cause = image_rebuild_cause(before, after, unit, paths, diff);
  const bool created = before.find(unit + "/plan.json") == nullptr;
  if (cause.empty() && !created) return;
  std::optional<std::string> text = after.read(unit + "/plan.json");
  const std::string image = text ? planned_image(*text) : "";
  if (image.empty()) return;
  add_image_change(before, unit, image, cause, diff);
  if (cause.empty()) return;
  std::string error;
  std::optional<plan::PlanManifest> plan = plan::parse_plan_json(*text, error);
  if (!plan) return;
  for (const plan::PlanAction& action : plan->actions) {
    // An image apply imports is the submit's; one it pushes to `image.registry` is a push's.
    const bool built = action.action == "push" || action.action == "submit";
    if (!built || action.image.empty()) continue;
    const std::string job = unit + "/SlurmJob/" + env;
    auto it = std::find_if(diff.changes.begin(), diff.changes.end(),
                           [&](const plan::Change& c) { return c.address == job; });
    if (it != diff.changes.end()) {
      it->notes.push_back("its image is rebuilt: " + cause);
      continue;
    }
    plan::Change resubmit;
    resubmit.address = job;
    resubmit.kind = "SlurmJob";
    resubmit.file = unit + "/" + env + ".sbatch";
    resubmit.action = plan::Action::Replace;
    resubmit.reason = "its image is rebuilt: " + cause;
    diff.changes.push_back(std::move(resubmit));
  }
}

}  // namespace

const Provider& slurm_provider() {
  static const SlurmProvider provider;
  return provider;
}

}  // namespace mlenv::target
