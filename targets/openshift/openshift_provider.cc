#include "targets/openshift/openshift_provider.h"

#include "targets/common/plan_json.h"
#include "targets/kube/day2/cluster_json.h"
#include "targets/kube/kube_provider.h"
#include "targets/openshift/day2/builds.h"
#include "targets/openshift/day2/routes.h"
#include "targets/openshift/field_rules.h"
#include "targets/openshift/image_build.h"
#include "targets/openshift/openshift_target.h"

namespace mlenv::target {
namespace {

constexpr std::string_view kScc = "SecurityContextConstraints";

class OpenShiftProvider : public KubeProvider {
 public:
  ir::Platform platform() const override { return ir::Platform::openshift; }
  const target::Target& target() const override { return target_; }
  const target::kube::RunWorkload& run() const override { return target::kube::kIndexedJobRun; }

  // The env's ServiceAccount must be allowed to use each SCC its pods need. kubectl auth can-i
  // prints "yes" or "no" (exit 0 or 1); --as impersonates the ServiceAccount, which is how the
  // SCC admission plugin sees the pod's creator for a StatefulSet's or Job's pods.
  std::vector<plan::Step> grant_checks(const plan::PlanManifest& plan) const override {
    std::vector<plan::Step> steps;
    for (const plan::PlanGrant& grant : plan.grants) {
      plan::Step step;
      step.kind = plan::StepKind::CheckGrant;
      step.args = {"auth",
                   "can-i",
                   "use",
                   "securitycontextconstraints/" + grant.scc,
                   "--as=system:serviceaccount:" + plan.namespace_ + ":" + grant.service_account,
                   "-n",
                   plan.namespace_};
      step.subject = "SecurityContextConstraints `" + grant.scc + "`";
      step.note = "the env's pods would be refused by SCC admission";
      steps.push_back(std::move(step));
    }
    return steps;
  }

  // An SCC admits pods with the privileges it allows.
  bool grants_privileges(std::string_view kind) const override { return kind == kScc; }

  // An SCC's resource is `securitycontextconstraints` (security.openshift.io/v1).
  std::string_view plural(std::string_view kind) const override {
    return kind == kScc ? "securitycontextconstraints" : "";
  }

  const check::PlatformRules& rules() const override { return openshift_rules(); }

  // Its tools are reached through Routes behind the oauth-proxy, and its images built by
  // BuildConfigs.
  std::optional<std::vector<plan::day2::ExposedUrl>> exposed_urls(
      const plan::day2::Session& session, Diagnostics& diagnostics) const override {
    return plan::day2::exposed_urls(session, diagnostics);
  }
  void print_build(std::ostream& out, const plan::day2::Session& session) const override {
    plan::day2::print_build(out, session);
  }

  // Plans written before `actions`: OpenShift's, each BuildConfig started (no digest to read)
  // before kube's rollout waits.
  void add_implied_actions(const plan::PlanObject& object,
                           std::vector<plan::PlanAction>& actions) const override {
    if (object.kind == "BuildConfig") {
      plan::PlanAction build;
      build.action = "build";
      build.after = object.address;
      build.build_config = object.name;
      actions.push_back(std::move(build));
    }
    KubeProvider::add_implied_actions(object, actions);
  }

  bool is_image_kind(std::string_view kind) const override {
    return openshift::is_image_kind(kind);
  }
  std::optional<plan::Step> build_step(const plan::PlanAction& action, const plan::EnvPlan& env,
                                       bool rebuild) const override {
    return openshift::build_step(action, env, rebuild);
  }

 private:
  target::openshift::OpenShiftTarget target_;
};

}  // namespace

const Provider& openshift_provider() {
  static const OpenShiftProvider provider;
  return provider;
}

}  // namespace mlenv::target
