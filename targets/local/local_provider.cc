// The local provider: envs render to boot.json (local_target.h) and run as processes of this
// machine that apply starts and stops (local_drivers.h, local_processes.h).

#include "targets/local/local_provider.h"

#include "targets/local/field_rules.h"
#include "targets/local/local_drivers.h"
#include "targets/local/local_target.h"
#include "targets/unit_run.h"

namespace mlenv::target {
namespace {

class LocalProvider : public Provider {
 public:
  ir::Platform platform() const override { return ir::Platform::local; }
  const target::Target& target() const override { return target_; }
  const check::PlatformRules& rules() const override { return local_rules(); }
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
  diff_unit_run(before, after, unit, paths,
                {"LocalRun", "boot.json", "its nodes restart with the new config"}, diff);
}

}  // namespace

const Provider& local_provider() {
  static const LocalProvider provider;
  return provider;
}

}  // namespace mlenv::target
