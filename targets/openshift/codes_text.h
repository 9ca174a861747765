#pragma once
// The sentences about OpenShift in the explanations of codes every platform reports:
// compiler/diag/codes_*.def splice them in (MLENV_TARGETS_<CODE>, generated), so that the core's
// registry names no SCC or build. Macros of adjacent literals, since a directive cannot hold a raw
// string of several lines.

/// E0418: the row of its table that only OpenShift has.
#define MLENV_OPENSHIFT_E0418 \
  "| `security.scc` (SecurityContextConstraints) | yes | no | no | no |\n"

/// E0703: the client its builds need.
#define MLENV_OPENSHIFT_E0703                                                                  \
  "Starting a BuildConfig's build needs `oc` (`oc start-build --wait`): when the plan has a\n" \
  "BuildConfig that must be built and no `oc` can be found, apply stops before running\n"      \
  "anything.\n"

/// E0712: where its builds' digest is read.
#define MLENV_OPENSHIFT_E0712                                                                      \
  "After `oc start-build --wait`, apply reads the built image's digest from the ImageStreamTag\n"  \
  "(`oc get istag <stream:tag> -o jsonpath={.image.dockerImageReference}`) and applies the\n"      \
  "workloads with that digest, so the pods run the new image. The tag named no image by digest:\n" \
  "the build pushed elsewhere, or the BuildConfig's output is not the plan's ImageStreamTag.\n"
