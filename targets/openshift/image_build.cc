#include "targets/openshift/image_build.h"

namespace mlenv::target::openshift {

// `oc start-build` of a Binary BuildConfig needs the build context from the client
// (--from-dir; oc refuses a Binary build without --from-dir, --from-file or --from-archive):
// the env's Dockerfile and `_runtime/` of the plan directory, copied apart (the step runner
// uploads nothing else: not every env's files and logs). --wait makes oc exit non-zero when
// the build fails. `oc get istag` then names the image by digest.
plan::Step build_step(const plan::PlanAction& action, const plan::EnvPlan& env, bool rebuild) {
  const std::string& namespace_ = env.manifest.namespace_;
  plan::Step step;
  step.kind = plan::StepKind::Build;
  step.client = plan::Client::Oc;
  step.rebuild = rebuild;
  step.image = action.image;
  step.subject = action.build_config;
  step.dockerfile = env.unit + "/Dockerfile";
  step.waits = true;
  step.then = {"start-build", action.build_config, "--from-dir=" + env.plan_root, "--wait",
               "-n",          namespace_};
  step.on_failure = {"logs", "bc/" + action.build_config, "-n", namespace_, "--tail=50"};
  if (!action.image_stream_tag.empty()) {
    step.args = {"get",
                 "istag",
                 action.image_stream_tag,
                 "-n",
                 namespace_,
                 "-o",
                 "jsonpath={.image.dockerImageReference}"};
  } else if (!rebuild) {
    step.then.clear();
  }
  return step;
}

bool is_image_kind(std::string_view kind) {
  return kind == "BuildConfig" || kind == "ImageStream";
}

}  // namespace mlenv::target::openshift
