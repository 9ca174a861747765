#pragma once
// What `mlenvc apply` runs for one env, as data: server-side apply of every object in plan
// order, the build and the rollout waits, replacements and the safe prune. Pure, so every rule
// is tested without a cluster.

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/apply/env_plan.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/plan/plan_tree.h"
#include "targets/common/plan_json.h"

namespace mlenv::plan {

/// Which program a step runs.
enum class Client {
  Kubectl,
  Oc,
  ImageBuilder,  ///< podman, buildah or docker, the first on PATH (the same arguments for each)
};

/// What the session does with a step's command and its output.
enum class StepKind {
  Run,               ///< run it; a failure stops apply
  RequireNamespace,  ///< `get namespace --ignore-not-found -o name`: empty output is E0710
  EnsureSecret,      ///< `get secret --ignore-not-found -o name`: empty output runs `then`
  CheckGrant,        ///< `auth can-i use ...`: "no" is E0711
  CheckPodSecurity,  ///< the namespace's enforced Pod Security level: one that refuses `subject`'s
                     ///< pods (`note` says why) is E0713, before anything is sent
  Build,             ///< read the built image's digest (`args`); build first when needed (`then`)
  Push,              ///< build (`then`) and push (`args`) an image, reading the pushed digest
  WaitJob,           ///< poll the run's conditions until Complete(d) or Failed
  WaitRollout,       ///< `rollout status` in rounds, reading admission refusals between them
  Notice,            ///< runs nothing: says `subject` (a claim apply keeps) where it stands
};

/// One command: arguments after the program, its stdin, and how to show that stdin.
struct Step {
  StepKind kind = StepKind::Run;
  Client client = Client::Kubectl;  ///< Oc for what only OpenShift's client does (its builds)
  std::vector<std::string> args;
  std::string input;       ///< JSON object(s) on stdin, "" for none
  std::string input_from;  ///< the committed file the input comes from, for dry runs
  bool waits = false;      ///< a build or rollout: subject to --timeout
  /// EnsureSecret: `create secret`, fed `random_bytes` random bytes on stdin.
  /// Build: the build (the platform's, image_build.h); `on_failure` shows the build log's tail.
  std::vector<std::string> then;
  std::vector<std::string> on_failure;
  int random_bytes = 0;
  bool random_hex = false;  ///< EnsureSecret: the random bytes as hex text
  bool rebuild = false;     ///< Build: the build inputs changed, or there is no applied record
  /// Build, Push: the image workloads name; Run: the image in `input` to replace by that image's
  /// digest.
  std::string image;
  /// Push: the digest reference the last apply pushed (`<repository>@sha256:...`), which the
  /// workloads run when nothing is rebuilt; "" when none is recorded.
  std::string digest;
  /// Build: the Dockerfile, relative to the plan root, whose build context (build_context.h:
  /// it and `_runtime/`) is uploaded instead of the whole plan root `then` names.
  std::string dockerfile;
  std::string subject;  ///< what the step is about, for messages (`Job/trainer`, a Secret)
  std::string note;     ///< CheckGrant: what a refusal means for the env's pods, said with E0711
  std::string pods;     ///< WaitJob: the label selector of the run's pods, whose logs say why
  /// Run: `get <resource> <name> --ignore-not-found -o name`, run first; empty output skips
  /// the step. A run's in-place change (its ttl) never creates again a run that finished and
  /// that its ttl removed.
  std::vector<std::string> unless_gone;
  /// WaitJob, for a run its platform's queue holds: reads the queue and why the run is not
  /// admitted (queue, status, reason and message, tab-separated), said when the wait ends
  /// unfinished.
  std::vector<std::string> queued;
};

/// The commands of one env: checks that change nothing, run for every env before any `steps`;
/// then the steps that change the cluster; then, once the env is recorded as applied, the waits
/// for its rollouts and runs. A wait that times out or fails leaves that record in place: the
/// objects are on the cluster, applied but not ready (Terraform saves state as each operation
/// completes, not when the resources become healthy).
struct EnvSteps {
  std::vector<Step> preflight;
  std::vector<Step> steps;
  std::vector<Step> waits;
};

/// The trailer naming the field manager the record's shared objects were applied as; records
/// without it applied them as `mlenvc-<env>`.
inline constexpr std::string_view kSharedManagerTrailer = "Shared-Manager: ";

/// The one field manager of the shared objects of the cluster of `unit` (`<cluster>/<env>`):
/// `mlenvc-<cluster>-shared`.
std::string shared_field_manager(const std::string& unit);

/// The steps of one env. Preflight: the Namespace exists, then (plain apply) the platform's
/// checks of its grants (KubeProvider::grant_checks).
/// Steps, plain apply: the ApplySet parent, each Secret created when missing, each non-admin
/// object (a delete first when it must be replaced; an unchanged Job skipped) followed by its
/// build or push, then the prune of objects that left the plan, newest order first. Waits:
/// each rollout, and with --wait each run's completion, in object order. With --admin: only
/// the admin objects and their prune.
/// Reports E0704 for protected objects that would be deleted without --allow-destroy and
/// E0607 for unreadable objects; adds the addresses it deletes to `destroyed`.
std::optional<EnvSteps> plan_steps(const EnvPlan& env, const StepOptions& options,
                                   std::set<std::string>& destroyed, Diagnostics& diagnostics);

/// The steps that take an env off the cluster (an env removed from the plan, or
/// `mlenvc destroy`): every object of its applied record (`env.applied`) deleted in reverse
/// apply order, then (plain apply) its Secrets and ApplySet parent: the GPUs are free. Its
/// claims (kept_when_env_leaves), and those a deleted StatefulSet's pods leave (pod_claims.h,
/// after it, last ordinal first), are deleted only when --allow-destroy names each; otherwise a
/// Notice says each is kept and names the flag. Volumes, namespaces, admin and shared objects
/// need --allow-destroy (E0704); shared objects in `options.shared_in_use` are left to the envs
/// that keep them.
std::optional<EnvSteps> destroy_steps(const EnvPlan& env, const StepOptions& options,
                                      std::set<std::string>& destroyed, Diagnostics& diagnostics);

/// The JSON member `"image":"<image>"` as object inputs spell it, which the session replaces by
/// the built digest.
std::string image_field(const std::string& image);

/// The resource name kubectl resolves without discovery ("statefulsets.apps"); `plural` is the
/// platform's plural of its own `kind` (KubeProvider::plural), "" for kube's.
std::string resource_name(const std::string& api_version, const std::string& kind,
                          std::string_view plural);

}  // namespace mlenv::plan
