#pragma once
// What the providers of OpenShift and Kubernetes share: the Kubernetes API's change semantics
// (replace_rules.h), the apply driver that runs oc or kubectl (kube_apply.h) and the day-2
// driver on the env's pods (day2/driver.h). Each platform adds its platform and renderer, and
// answers what that shared code asks of it: what its runs are, what apply checks before it
// applies, and the plural names of its own kinds.

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "targets/kube/apply/steps.h"
#include "targets/kube/run_workload.h"
#include "targets/provider.h"

namespace mlenv::plan::day2 {
class Session;
struct ExposedUrl;
}  // namespace mlenv::plan::day2

namespace mlenv::target {

class KubeProvider : public Provider {
 public:
  /// Objects of its RunWorkload's kind, and kube's own runs (kIndexedJobRun).
  bool is_run_kind(std::string_view kind) const override;
  std::string replace_reason(std::string_view kind, std::string_view path,
                             const std::map<std::string, std::string>& object) const override;
  /// Notes on the pods a change rolls or re-runs, and the changes a rebuilt image makes.
  void diff_unit(const plan::PlanTree& before, const plan::PlanTree& after, const std::string& unit,
                 const std::vector<std::string>& paths, plan::PlanDiff& diff) const override;
  /// A rollout wait after each StatefulSet, as apply always did.
  void add_implied_actions(const plan::PlanObject& object,
                           std::vector<plan::PlanAction>& actions) const override;
  const plan::ApplyDriver& apply() const override;
  /// The step that makes the image of the plan.json `build` action of `env` (a build in the
  /// cluster: OpenShift's, targets/openshift/image_build.h), building when `rebuild`;
  /// nullopt where the platform has no such build (Kubernetes pushes: `push`).
  virtual std::optional<plan::Step> build_step(const plan::PlanAction&, const plan::EnvPlan&,
                                               bool) const {
    return std::nullopt;
  }
  const plan::day2::Day2Driver& day2() const override;

  /// What its runs are: their kind, and how their pods are found and named.
  virtual const target::kube::RunWorkload& run() const = 0;
  /// The preflight steps that check what `plan`'s grants (plan.json `grants`) give the env's
  /// ServiceAccount, which its pods need to be admitted; none unless the platform grants any.
  virtual std::vector<plan::Step> grant_checks(const plan::PlanManifest& plan) const;
  /// kubectl's plural of `kind` where it is one of the platform's own kinds that kube's rule
  /// (resource_name) would misspell; "" otherwise.
  virtual std::string_view plural(std::string_view kind) const;
  /// Day 2 (`status`, `urls`): the URLs the env exposes through the platform's own kinds
  /// (OpenShift's Routes); none where it exposes none, without asking the cluster, whose API
  /// may not have such a kind. nullopt with a diagnostic when they cannot be read.
  virtual std::optional<std::vector<plan::day2::ExposedUrl>> exposed_urls(
      const plan::day2::Session& session, Diagnostics& diagnostics) const;
  /// Day 2 (`status`): a line on the env's newest build where the cluster builds its image;
  /// nothing otherwise.
  virtual void print_build(std::ostream& out, const plan::day2::Session& session) const;
  /// Day 2 (`status`), when a rank has no pod: where the platform's queue holds the env's
  /// workload and why (`queued in <queue>: <reason>`); nothing where it queues none.
  virtual void print_queue(std::ostream& out, const plan::day2::Session& session) const;
  /// Apply --wait: the arguments that print where the platform's queue holds the run `object`
  /// (committed as `yaml`), as parse_queued reads them; none where it queues nothing.
  virtual std::vector<std::string> queue_args(const plan::PlanObject& object,
                                              const std::string& yaml) const;
};

/// The provider of `platform`, one that KubeProvider implements (OpenShift, Kubernetes).
const KubeProvider& kube_provider(ir::Platform platform);

}  // namespace mlenv::target
