#pragma once
// How apply makes an OpenShift env's image: a build in the cluster (the BuildConfig and
// ImageStream named after the image, which the envs that run it share), read back by digest.

#include <string_view>

#include "targets/kube/apply/steps.h"

namespace mlenv::target::openshift {

/// The step of the plan.json `build` action of `env`: `oc start-build` of the image's
/// BuildConfig when `rebuild` (else only when its ImageStreamTag is missing), then `oc get
/// istag` for the digest the workloads run.
plan::Step build_step(const plan::PlanAction& action, const plan::EnvPlan& env, bool rebuild);

/// Whether a shared object of `kind` is an image's: a BuildConfig or an ImageStream.
bool is_image_kind(std::string_view kind);

}  // namespace mlenv::target::openshift
