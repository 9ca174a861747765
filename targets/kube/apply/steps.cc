#include "targets/kube/apply/steps.h"

#include <algorithm>
#include <iterator>
#include <map>

#include <yaml-cpp/yaml.h>

#include "compiler/apply/applyset.h"
#include "compiler/apply/image_builder.h"
#include "compiler/apply/records.h"
#include "compiler/base/file_system.h"
#include "compiler/diag/render.h"
#include "compiler/plan/change.h"
#include "compiler/plan/differ.h"
#include "compiler/plan/pod_claims.h"
#include "compiler/plan/yaml_fields.h"
#include "targets/kube/kube_provider.h"
#include "targets/kube/replace_rules.h"

namespace mlenv::plan {
namespace {

constexpr const char* kPartOf = "applyset.k8s.io/part-of";

std::string object_path(const std::string& dir, const PlanObject& object) {
  return normalize_path(dir + "/" + object.file);
}

std::vector<std::string> namespace_args(const PlanObject& object) {
  if (object.namespace_.empty()) return {};
  return {"-n", object.namespace_};
}

// Server-side apply as field manager `manager` (never --force-conflicts): `mlenvc` for an
// env's own objects, shared_field_manager for the objects the envs of a cluster share.
Step apply_step(const std::string& input, const std::string& from, const PlanObject& object,
                const std::string& manager) {
  Step step;
  step.args = {"apply", "--server-side", "--field-manager=" + manager};
  for (std::string& arg : namespace_args(object)) step.args.push_back(std::move(arg));
  step.args.insert(step.args.end(), {"-f", "-"});
  step.input = input;
  step.input_from = from;
  return step;
}

// Deletes one owned object of an env of `platform`: namespaced ones only while they still carry
// this env's part-of label, so an object someone else took over is left alone. Shared objects
// carry no env's label; apply deletes them only when --allow-destroy names them.
Step delete_step(const PlanObject& object, const std::string& applyset_id,
                 const target::KubeProvider& platform) {
  Step step;
  step.args = {"delete",
               resource_name(object.api_version, object.kind, platform.plural(object.kind))};
  if (object.namespace_.empty()) {
    step.args.push_back(object.name);
  } else if (object.admin || object.shared) {
    step.args.insert(step.args.end(), {object.name, "-n", object.namespace_});
  } else {
    step.args.insert(step.args.end(),
                     {"-n", object.namespace_, "-l", std::string(kPartOf) + "=" + applyset_id,
                      "--field-selector", "metadata.name=" + object.name});
  }
  step.args.insert(step.args.end(), {"--ignore-not-found", "--wait=true"});
  // A run's pods must be gone before the new run starts: an Indexed Job's pods are reached as
  // `<job>-<index>.<service>`, and the old gang would answer for the new one.
  if (platform.is_run_kind(object.kind)) step.args.push_back("--cascade=foreground");
  return step;
}

std::set<std::string> group_kinds(const PlanManifest& manifest) {
  std::set<std::string> out;
  for (const PlanObject& object : manifest.objects) {
    if (!object.admin && !object.shared) out.insert(group_kind(object.api_version, object.kind));
  }
  return out;
}

// The capabilities Pod Security's baseline level lets a container add
// (k8s.io/pod-security-admission policy/check_capabilities_baseline.go); restricted allows
// only NET_BIND_SERVICE.
bool baseline_capability(std::string_view capability) {
  static constexpr std::string_view kAllowed[] = {
      "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
      "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};
  return std::find(std::begin(kAllowed), std::end(kAllowed), capability) != std::end(kAllowed);
}

// `container `main`` for a path under `containers[name=main]`, else the path.
std::string container_of(const std::string& path) {
  const std::size_t at = path.rfind("[name=");
  if (at == std::string::npos) return "`" + path + "`";
  return "container `" + path.substr(at + 6, path.find(']', at) - at - 6) + "`";
}

// Why only Pod Security's `privileged` level admits the pods of `yaml` (a workload): a
// container that is privileged (check_privileged.go) or adds a capability beyond baseline's;
// "" when baseline admits them.
std::string needs_privileged(const std::string& yaml) {
  FieldMap fields;
  try {
    fields = flatten(YAML::Load(yaml));
  } catch (const YAML::Exception&) {
    return "";
  }
  for (const auto& [path, value] : fields) {
    const std::size_t at = path.find(".securityContext.");
    if (at == std::string::npos) continue;
    const std::string container = container_of(path.substr(0, at));
    const std::string field = path.substr(at + 17);
    std::string word = value;
    std::erase(word, '"');
    if (field == "privileged" && word == "true") return container + " is privileged";
    if (field.starts_with("capabilities.add[") && !baseline_capability(word))
      return container + " adds the capability " + word;
  }
  return "";
}

const PlanObject* applied_object(const EnvPlan& env, const std::string& address) {
  if (!env.applied) return nullptr;
  for (const PlanObject& object : env.applied->objects) {
    if (object.address == address) return &object;
  }
  return nullptr;
}

// `--timeout` as a kubectl flag.
std::string timeout_flag(const StepOptions& options) {
  return "--timeout=" + options.timeout;
}

// Builds the steps of one env; each member adds the steps of one responsibility.
class EnvStepBuilder {
 public:
  EnvStepBuilder(const EnvPlan& env, const StepOptions& options, std::set<std::string>& destroyed,
                 Diagnostics& diagnostics)
      : env_(env),
        plan_(env.manifest),
        platform_(target::kube_provider(env.manifest.platform)),
        options_(options),
        destroyed_(destroyed),
        diagnostics_(diagnostics),
        parent_(applyset_parent(plan_.env, plan_.namespace_, plan_.source)),
        applied_parent_(env.applied_parent.empty()
                            ? parent_
                            : applyset_parent_named(env.applied_parent, plan_.namespace_)),
        rebuild_(image_inputs_changed(env)) {}

  // Every object the record applied, last in first out, then (plain apply) the Secrets apply
  // created for the env and its ApplySet parent: the env leaves the cluster.
  std::optional<EnvSteps> destroy() {
    env_leaves_ = true;
    prune_except({});
    if (!options_.admin && env_.applied) {
      for (const PlanSecret& secret : env_.applied->secrets)
        out_.steps.push_back(delete_named("secret", secret.name));
      out_.steps.push_back(delete_named("configmap", applied_parent_.name));
    }
    if (refused_) return std::nullopt;
    return std::move(out_);
  }

  std::optional<EnvSteps> build() {
    preflight();
    find_replacements();
    if (options_.admin) {
      if (!admin_objects()) return std::nullopt;
    } else {
      std::set<std::string> kinds = group_kinds(plan_);
      std::set<std::string> all_kinds = kinds;
      if (env_.applied) all_kinds.merge(group_kinds(*env_.applied));
      out_.steps.push_back(parent_step(all_kinds));
      secrets();
      if (!objects()) return std::nullopt;
      prune();
      if (all_kinds != kinds) out_.steps.push_back(parent_step(kinds));
      retire_applied_parent();
    }
    if (options_.admin) prune();
    if (refused_) return std::nullopt;
    return std::move(out_);
  }

 private:
  // The Namespace must exist (apply never creates it: that is the platform team's), and the
  // env's ServiceAccount must hold the grants its pods need, as its platform checks them.
  void preflight() {
    bool namespaced = !options_.admin;
    for (const PlanObject& object : plan_.objects)
      namespaced = namespaced || (object.admin && !object.namespace_.empty());
    if (namespaced) {
      Step step;
      step.kind = StepKind::RequireNamespace;
      step.args = {"get", "namespace", plan_.namespace_, "--ignore-not-found", "-o", "name"};
      step.subject = plan_.namespace_;
      out_.preflight.push_back(std::move(step));
    }
    if (options_.admin) return;
    for (Step& step : platform_.grant_checks(plan_)) out_.preflight.push_back(std::move(step));
    pod_security();
  }

  // Pods that only the `privileged` level admits are sent only to a namespace that does not
  // enforce `baseline` or `restricted` (`pod-security.kubernetes.io/enforce`): otherwise
  // admission refuses each pod the controller creates, and apply would learn it only from
  // FailedCreate events. An unlabelled namespace has the cluster's default level, which apply
  // cannot read: its pods are sent.
  void pod_security() {
    for (const PlanObject& object : plan_.objects) {
      if (object.admin) continue;
      std::optional<std::string> yaml = env_.files.read(object_path(env_.dir, object));
      std::string why = yaml ? needs_privileged(*yaml) : "";
      if (why.empty()) continue;
      Step step;
      step.kind = StepKind::CheckPodSecurity;
      step.args = {"get", "namespace", plan_.namespace_, "-o",
                   "jsonpath={.metadata.labels.pod-security\\.kubernetes\\.io/enforce}"};
      step.subject = object.address;
      step.note = why;
      out_.preflight.push_back(std::move(step));
      return;
    }
  }

  // Each Secret is created once, when missing, with random bytes on stdin (never in argv, the
  // plan or a log); an existing Secret is never read or changed.
  void secrets() {
    for (const PlanSecret& secret : plan_.secrets) {
      Step step;
      step.kind = StepKind::EnsureSecret;
      step.args = {"get", "secret", secret.name, "-n", plan_.namespace_, "--ignore-not-found",
                   "-o",  "name"};
      step.then = {"create",
                   "secret",
                   "generic",
                   secret.name,
                   "-n",
                   plan_.namespace_,
                   "--from-file=" + secret.key + "=/dev/stdin"};
      step.random_bytes = secret.random_bytes;
      step.random_hex = secret.hex;
      step.subject = secret.name;
      out_.steps.push_back(std::move(step));
    }
  }

  // Objects whose change the API server refuses in place (a Job's pod template, a
  // StatefulSet's claim templates): deleted before they are applied again.
  void find_replacements() {
    if (!env_.applied) return;
    PlanTree before(env_.applied_files.loader());
    PlanTree after(env_.files.loader());
    for (const auto& [path, entry] : env_.applied_files.entries()) {
      if (path.starts_with(env_.dir + "/"))
        before.add_id(env_.unit + path.substr(env_.dir.size()), entry.id);
    }
    for (const auto& [path, entry] : env_.files.entries()) {
      if (path.starts_with(env_.dir + "/"))
        after.add_id(env_.unit + path.substr(env_.dir.size()), entry.id);
    }
    for (const Change& change : diff_plans(before, after).changes) {
      if (change.action != Action::Replace) continue;
      std::string local = change.address.substr(env_.unit.size() + 1);
      const PlanObject* object = applied_object(env_, local);
      if (object != nullptr && object->admin == options_.admin &&
          allow(object_address(*object), *object, "replace")) {
        replaced_[local] = *object;
        destroyed_.insert(object_address(*object));
      }
    }
  }

  bool admin_objects() {
    for (const PlanObject& object : plan_.objects) {
      if (!object.admin) continue;
      std::optional<Step> step = object_step(object, false);
      if (!step) return false;
      out_.steps.push_back(std::move(*step));
    }
    return true;
  }

  bool objects() {
    for (const PlanObject& object : plan_.objects) {
      if (object.admin) continue;
      if (platform_.is_run_kind(object.kind) && !job_must_run(object)) {
        skipped_.insert(object.address);
        continue;
      }
      auto old = replaced_.find(object.address);
      if (old != replaced_.end()) {
        out_.steps.push_back(delete_step(old->second, applied_parent_.id, platform_));
      } else if (platform_.is_run_kind(object.kind) && builds_image() &&
                 applied_object(env_, object.address) != nullptr) {
        out_.steps.push_back(
            delete_step(*applied_object(env_, object.address), applied_parent_.id, platform_));
      }
      std::optional<Step> step = object_step(object, !object.shared);
      if (!step) return false;
      if (platform_.is_run_kind(object.kind) && old == replaced_.end() && !builds_image() &&
          applied_object(env_, object.address) != nullptr)
        step->unless_gone = present_args(object);
      out_.steps.push_back(std::move(*step));
      if (object.shared) release_env_manager(object);
      actions_after(object);
    }
    return true;
  }

  // A shared object is changed through one field manager per cluster (shared_field_manager):
  // every env's copy is the same, so whichever env applies a change is its one owner. Under a
  // manager per env, as records without kSharedManagerTrailer applied them, two envs co-own
  // each field and server-side apply refuses any later change by either ("Any subsequent
  // attempt to change the value of the shared field, by any of the appliers, results in a
  // conflict", kubernetes.io/docs/reference/using-api/server-side-apply, Conflicts). Once the
  // cluster's manager co-owns the fields, the env's old manager applies the object's identity
  // alone and so gives up its fields, which stay (the cluster's manager still owns them:
  // "Transferring ownership" on the same page).
  void release_env_manager(const PlanObject& object) {
    if (applied_object(env_, object.address) == nullptr ||
        raw_trailer(env_.record_message, kSharedManagerTrailer) == shared_field_manager(env_.unit))
      return;
    std::string identity = "{\"apiVersion\":\"" + json_escape(object.api_version) +
                           "\",\"kind\":\"" + json_escape(object.kind) +
                           "\",\"metadata\":{\"name\":\"" + json_escape(object.name) + "\"";
    if (!object.namespace_.empty())
      identity += ",\"namespace\":\"" + json_escape(object.namespace_) + "\"";
    identity += "}}";
    const std::string manager = "mlenvc-" + plan_.env;
    out_.steps.push_back(apply_step(identity,
                                    "(" + object.kind + "/" + object.name +
                                        " by name alone: " + manager + " gives its fields up)",
                                    object, manager));
  }

  // `get` of the applied `object`, printing its name only while it exists.
  std::vector<std::string> present_args(const PlanObject& object) const {
    return {"get",
            resource_name(object.api_version, object.kind, platform_.plural(object.kind)),
            object.name,
            "-n",
            object.namespace_,
            "--ignore-not-found",
            "-o",
            "name"};
  }

  // A Job's pod template is immutable (Kubernetes rejects spec.template updates of a Job), and
  // a finished run must stay finished: a Job equal to the applied one is not applied again,
  // even after its ttlSecondsAfterFinished removed it. A rebuilt image is a new run.
  bool job_must_run(const PlanObject& job) const {
    const PlanObject* applied = applied_object(env_, job.address);
    return applied == nullptr || applied->sha256 != job.sha256 || builds_image();
  }

  bool builds_image() const {
    for (const PlanAction& action : plan_.actions) {
      if ((action.action == "build" || action.action == "push") && rebuild_) return true;
    }
    return false;
  }

  void actions_after(const PlanObject& object) {
    for (const PlanAction& action : plan_.actions) {
      if (action.after != object.address) continue;
      if (action.action == "build") {
        // The platform's build in the cluster (its provider's step).
        std::optional<Step> step = kube_provider().build_step(action, env_, rebuild_);
        if (step && (!step->then.empty() || !step->args.empty()))
          out_.steps.push_back(std::move(*step));
        if (!action.image.empty()) images_.push_back(action.image);
      } else if (action.action == "push") {
        out_.steps.push_back(push_step(action));
        images_.push_back(action.image);
      } else if (action.action == "rollout") {
        Step rollout;
        rollout.kind = StepKind::WaitRollout;
        rollout.subject = object.address;
        std::string kind = object.kind;
        std::transform(kind.begin(), kind.end(), kind.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        rollout.args = {"rollout", "status",          kind + "/" + object.name,
                        "-n",      object.namespace_, timeout_flag(options_)};
        rollout.waits = true;
        out_.waits.push_back(std::move(rollout));
      } else if (action.action == "complete" && options_.wait) {
        Step wait;
        wait.kind = StepKind::WaitJob;
        // Complete and Failed are the terminal conditions of a Job (batch/v1 JobConditionType);
        // `kubectl wait` can wait for only one of them, so apply polls both. The platform's run
        // kind says which resource to read (RunWorkload) and which label finds its pods.
        wait.args = {"get",
                     std::string(platform_.run().resource),
                     object.name,
                     "-n",
                     object.namespace_,
                     "-o",
                     "jsonpath={.status.conditions[?(@.status==\"True\")].type}"};
        wait.waits = true;
        wait.subject = object.address;
        wait.pods = target::kube::run_pods_selector(platform_.run(), object.name);
        if (std::optional<std::string> yaml = env_.files.read(object_path(env_.dir, object)))
          wait.queued = platform_.queue_args(object, *yaml);
        out_.waits.push_back(std::move(wait));
      }
    }
  }

  // Where the cluster builds none, the client builds the image from the plan directory (the env's
  // Dockerfile and `_runtime/`) and pushes it where the workloads pull it from, then the workloads
  // run it by the pushed digest. Only when the Dockerfile or `_runtime/` changed, as for a build,
  // or when no digest of the image's repository is recorded; otherwise the recorded digest.
  Step push_step(const PlanAction& action) const {
    Step step;
    step.kind = StepKind::Push;
    step.client = Client::ImageBuilder;
    step.waits = true;
    step.subject = action.image;
    step.image = action.image;
    if (image_repository(env_.applied_image) == image_repository(action.image))
      step.digest = env_.applied_image;
    step.rebuild = rebuild_ || step.digest.empty();
    step.then =
        image_build_args(env_.plan_root + "/" + action.dockerfile, action.image, env_.plan_root);
    step.args = {"push", action.image};
    return step;
  }

  const target::KubeProvider& kube_provider() const {
    return dynamic_cast<const target::KubeProvider&>(target::provider(plan_.platform));
  }

  // The parent the applied record named, when it is not this plan's (a record written before
  // parents named the program, or a renamed program): its members are relabelled by now.
  void retire_applied_parent() {
    if (!env_.applied || applied_parent_.name == parent_.name) return;
    out_.steps.push_back(delete_named("configmap", applied_parent_.name));
  }

  Step delete_named(const std::string& resource, const std::string& name) const {
    Step step;
    step.args = {"delete",     resource, name, "-n", plan_.namespace_, "--ignore-not-found",
                 "--wait=true"};
    return step;
  }

  // Prune: only objects recorded as applied by this env (admin ones only with --admin), last
  // in, first out.
  void prune() {
    std::set<std::string> current;
    for (const PlanObject& object : plan_.objects) current.insert(object.address);
    prune_except(current);
  }

  // Deletes the applied objects whose address is not in `current`.
  void prune_except(const std::set<std::string>& current) {
    if (!env_.applied) return;
    std::vector<PlanObject> gone;
    for (const PlanObject& object : env_.applied->objects) {
      if (current.count(object.address) == 0 && object.admin == options_.admin)
        gone.push_back(object);
    }
    std::reverse(gone.begin(), gone.end());
    for (const PlanObject& object : gone) {
      if (object.shared && options_.shared_in_use.count(shared_key(object)) != 0) continue;
      std::string address = object_address(object);
      if (env_leaves_ && kept_when_env_leaves(object.kind, object.shared) &&
          options_.allow_destroy.count(address) == 0) {
        if (object.kind == "PersistentVolumeClaim") {
          keep_claim(address, object.name, "");
        } else {
          keep_shared(address, object);
        }
        continue;
      }
      if (!allow(address, object, "delete")) continue;
      destroyed_.insert(address);
      out_.steps.push_back(delete_step(object, applied_parent_.id, platform_));
      if (object.kind == "StatefulSet") pod_claims_after(object);
    }
  }

  // The claims the StatefulSet's pods were given outlive it (whenDeleted: Retain) and no
  // record lists them: deleted after it, last ordinal first, only when --allow-destroy names
  // each (the plan marks them so); otherwise apply says it keeps them.
  void pod_claims_after(const PlanObject& statefulset) {
    std::optional<std::string> yaml = env_.applied_files.read(object_path(env_.dir, statefulset));
    std::optional<PodClaims> claims = yaml ? pod_claims_of(*yaml) : std::nullopt;
    if (!claims) return;
    for (const std::string& name : claim_names(*claims, 0, claims->replicas)) {
      const std::string address = env_.unit + "/PersistentVolumeClaim/" + name;
      if (options_.allow_destroy.count(address) != 0) {
        destroyed_.insert(address);
        out_.steps.push_back(delete_named("persistentvolumeclaims", name));
        continue;
      }
      keep_claim(address, name, " (a claim of StatefulSet/" + statefulset.name + "'s pods)");
    }
  }

  // Says where the delete would be that apply keeps the cluster's shared `object`, and the
  // flag that deletes it.
  void keep_shared(const std::string& address, const PlanObject& object) {
    Step keep;
    keep.kind = StepKind::Notice;
    keep.subject = "Keeping " + object.kind + "/" + object.name + ", the cluster's; " +
                   allow_destroy_flag(address) + " deletes it";
    out_.steps.push_back(std::move(keep));
  }

  // Says where the delete would be that apply keeps the claim `name` and its data, and the
  // flag that deletes it.
  void keep_claim(const std::string& address, const std::string& name, const std::string& whose) {
    Step keep;
    keep.kind = StepKind::Notice;
    keep.subject = "Keeping PersistentVolumeClaim/" + name + " and its data" + whose + "; " +
                   allow_destroy_flag(address) + " deletes it";
    out_.steps.push_back(std::move(keep));
  }

  // The address the plan shows the object at, which --allow-destroy names: admin objects under
  // `<cluster>/_admin/`, shared ones once under `<cluster>/_shared/`.
  std::string object_address(const PlanObject& object) const {
    const std::string cluster = env_.unit.substr(0, env_.unit.find('/'));
    if (object.admin) return cluster + "/_admin/" + object.address;
    if (object.shared) return cluster + "/_shared/" + object.address;
    return env_.unit + "/" + object.address;
  }

  bool allow(const std::string& address, const PlanObject& object, const char* what) {
    // The plan marks the same objects (change.h): a reviewer sees each refusal coming.
    if (!needs_allow_destroy(object.kind, object.admin, object.shared)) return true;
    if (options_.allow_destroy.count(address) != 0) return true;
    Diagnostic& d = diagnostics_.report(Code::E0704, {},
                                        std::string("apply would ") + what + " `" + address + "`",
                                        "pass " + allow_destroy_flag(address) + " to allow it");
    d.notes.push_back({object.admin ? "objects in `_admin` may be used by other envs"
                       : object.shared
                           ? "other envs of namespace `" + object.namespace_ + "` may use it"
                           : object.kind + " objects are never deleted without --allow-destroy",
                       {}});
    refused_ = true;
    return false;
  }

  Step parent_step(const std::set<std::string>& kinds) const {
    PlanObject parent_object;
    parent_object.namespace_ = plan_.namespace_;
    return apply_step(applyset_parent_json(parent_, kinds), "", parent_object, "mlenvc");
  }

  std::optional<Step> object_step(const PlanObject& object, bool labelled) {
    std::string path = object_path(env_.dir, object);
    std::optional<std::string> yaml = env_.files.read(path);
    if (!yaml) {
      diagnostics_.report(Code::E0607, {},
                          "`" + path + "` is listed in plan.json but not committed");
      return std::nullopt;
    }
    try {
      Step step = apply_step(object_json(*yaml, labelled ? kPartOf : "", parent_.id), path, object,
                             object.shared ? shared_field_manager(env_.unit) : "mlenvc");
      // Workloads run the image by digest once it is built (a mutable tag with IfNotPresent
      // never rolls the pods on nodes that cached it).
      for (const std::string& image : images_) {
        if (step.input.find(image_field(image)) != std::string::npos) step.image = image;
      }
      return step;
    } catch (const std::exception& error) {
      diagnostics_.report(Code::E0607, {},
                          "`" + path + "` is not one Kubernetes object: " + error.what());
      return std::nullopt;
    }
  }

  const EnvPlan& env_;
  const PlanManifest& plan_;
  const target::KubeProvider& platform_;  // what the env's platform says of its objects
  const StepOptions& options_;
  std::set<std::string>& destroyed_;
  Diagnostics& diagnostics_;
  const ApplySetParent parent_;
  const ApplySetParent applied_parent_;  // labels the objects of the applied record
  const bool rebuild_;
  EnvSteps out_;
  bool refused_ = false;
  bool env_leaves_ = false;  // destroy(): its claims stay unless --allow-destroy names them
  std::map<std::string, PlanObject> replaced_;  // by `Kind/name`, the applied object
  std::vector<std::string> images_;             // images built so far, in object order
  std::set<std::string> skipped_;               // unchanged Jobs
};

}  // namespace

std::string resource_name(const std::string& api_version, const std::string& kind,
                          std::string_view platform_plural) {
  static const std::map<std::string, std::string> kPlural = {
      {"NetworkAttachmentDefinition", "network-attachment-definitions"},
      {"NetworkPolicy", "networkpolicies"},
      {"Ingress", "ingresses"},
      {"ImagePolicy", "imagepolicies"},
  };
  std::string plural(platform_plural);
  auto it = kPlural.find(kind);
  if (plural.empty() && it != kPlural.end()) {
    plural = it->second;
  } else if (plural.empty()) {
    plural = kind;
    std::transform(plural.begin(), plural.end(), plural.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    plural += plural.ends_with("s") ? "es" : "s";
  }
  std::string group = api_group(api_version);
  return group.empty() ? plural : plural + "." + group;
}

std::string image_field(const std::string& image) {
  return "\"image\":\"" + json_escape(image) + "\"";
}

std::optional<EnvSteps> plan_steps(const EnvPlan& env, const StepOptions& options,
                                   std::set<std::string>& destroyed, Diagnostics& diagnostics) {
  return EnvStepBuilder(env, options, destroyed, diagnostics).build();
}

std::optional<EnvSteps> destroy_steps(const EnvPlan& env, const StepOptions& options,
                                      std::set<std::string>& destroyed, Diagnostics& diagnostics) {
  return EnvStepBuilder(env, options, destroyed, diagnostics).destroy();
}

std::string shared_field_manager(const std::string& unit) {
  return "mlenvc-" + unit.substr(0, unit.find('/')) + "-shared";
}

}  // namespace mlenv::plan
