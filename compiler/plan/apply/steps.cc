#include "compiler/plan/apply/steps.h"

#include <algorithm>
#include <map>

#include "compiler/base/file_system.h"
#include "compiler/plan/apply/applyset.h"
#include "compiler/plan/differ.h"

namespace mlenv::plan {
namespace {

constexpr const char* kPartOf = "applyset.k8s.io/part-of";

// Kinds whose deletion loses data or grants, or that are shared beyond one env.
bool protected_kind(const std::string& kind) {
  return kind == "PersistentVolumeClaim" || kind == "PersistentVolume" || kind == "Namespace" ||
         kind == "SecurityContextConstraints";
}

std::string object_path(const std::string& dir, const PlanObject& object) {
  return normalize_path(dir + "/" + object.file);
}

std::vector<std::string> namespace_args(const PlanObject& object) {
  if (object.namespace_.empty()) return {};
  return {"-n", object.namespace_};
}

// Server-side apply as field manager `mlenvc`, or `mlenvc-<env>` for an object the envs of a
// namespace share: each env then owns its own fields (its OAuth redirect on the cluster's
// ServiceAccount), an env applied from another program cannot remove them, and a field two
// envs set differently is a conflict the API server reports instead of a silent flip.
Step apply_step(const std::string& input, const std::string& from, const PlanObject& object,
                const std::string& env) {
  Step step;
  step.args = {"apply", "--server-side",
               object.shared ? "--field-manager=mlenvc-" + env : "--field-manager=mlenvc"};
  for (std::string& arg : namespace_args(object)) step.args.push_back(std::move(arg));
  step.args.insert(step.args.end(), {"-f", "-"});
  step.input = input;
  step.input_from = from;
  return step;
}

// Deletes one owned object: namespaced ones only while they still carry this env's part-of
// label, so an object someone else took over is left alone. Shared objects carry no env's
// label; apply deletes them only when --allow-destroy names them.
Step delete_step(const PlanObject& object, const std::string& applyset_id) {
  Step step;
  step.args = {"delete", resource_name(object.api_version, object.kind)};
  if (object.admin || object.namespace_.empty()) {
    step.args.push_back(object.name);
  } else if (object.shared) {
    step.args.insert(step.args.end(), {object.name, "-n", object.namespace_});
  } else {
    step.args.insert(step.args.end(),
                     {"-n", object.namespace_, "-l", std::string(kPartOf) + "=" + applyset_id,
                      "--field-selector", "metadata.name=" + object.name});
  }
  step.args.insert(step.args.end(), {"--ignore-not-found", "--wait=true"});
  return step;
}

std::set<std::string> group_kinds(const PlanManifest& manifest) {
  std::set<std::string> out;
  for (const PlanObject& object : manifest.objects) {
    if (!object.admin && !object.shared) out.insert(group_kind(object.api_version, object.kind));
  }
  return out;
}

bool build_inputs_changed(const EnvPlan& env) {
  if (!env.applied) return true;
  auto id_of = [](const PlanTree& tree, const std::string& path) -> std::optional<BlobId> {
    const PlanEntry* entry = tree.find(path);
    return entry == nullptr ? std::nullopt : std::optional<BlobId>(entry->id);
  };
  for (const PlanObject& object : env.manifest.objects) {
    if (object.kind != "BuildConfig" && object.kind != "ImageStream") continue;
    std::string path = object_path(env.dir, object);
    if (id_of(env.files, path) != id_of(env.applied_files, path)) return true;
  }
  for (const auto& [path, entry] : env.files.entries()) {
    if (path.ends_with("/Dockerfile") && id_of(env.applied_files, path) != entry.id) return true;
  }
  return false;
}

}  // namespace

std::string shared_key(const PlanObject& object) {
  return object.namespace_ + "/" + object.address;
}

std::string resource_name(const std::string& api_version, const std::string& kind) {
  static const std::map<std::string, std::string> kPlural = {
      {"NetworkAttachmentDefinition", "network-attachment-definitions"},
      {"SecurityContextConstraints", "securitycontextconstraints"},
      {"NetworkPolicy", "networkpolicies"},
      {"Ingress", "ingresses"},
      {"ImagePolicy", "imagepolicies"},
  };
  std::string plural;
  auto it = kPlural.find(kind);
  if (it != kPlural.end()) {
    plural = it->second;
  } else {
    plural = kind;
    std::transform(plural.begin(), plural.end(), plural.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    plural += plural.ends_with("s") ? "es" : "s";
  }
  std::string group = api_group(api_version);
  return group.empty() ? plural : plural + "." + group;
}

std::optional<std::vector<Step>> plan_steps(const EnvPlan& env, const StepOptions& options,
                                            std::set<std::string>& destroyed,
                                            Diagnostics& diagnostics) {
  const PlanManifest& plan = env.manifest;
  const ApplySetParent parent = applyset_parent(plan.env, plan.namespace_);
  std::vector<Step> steps;
  bool refused = false;
  auto allow = [&](const std::string& address, const PlanObject& object, const char* what) {
    if (!protected_kind(object.kind) && !object.admin && !object.shared) return true;
    if (options.allow_destroy.count(address) != 0) return true;
    Diagnostic& d = diagnostics.report(Code::E0704, {},
                                       std::string("apply would ") + what + " `" + address + "`",
                                       "pass --allow-destroy=" + address + " to allow it");
    d.notes.push_back({object.admin ? "cluster-scoped objects in `_admin` may be used by other envs"
                       : object.shared
                           ? "other envs of namespace `" + object.namespace_ + "` may use it"
                           : object.kind + " objects are never deleted without --allow-destroy",
                       {}});
    refused = true;
    return false;
  };

  // Replacements: objects whose change the API server refuses in place.
  std::map<std::string, PlanObject> replaced;  // by `Kind/name`, the applied object
  if (env.applied) {
    PlanTree before(env.applied_files.loader());
    PlanTree after(env.files.loader());
    for (const auto& [path, entry] : env.applied_files.entries()) {
      if (path.starts_with(env.dir + "/"))
        before.add_id(env.unit + path.substr(env.dir.size()), entry.id);
    }
    for (const auto& [path, entry] : env.files.entries()) {
      if (path.starts_with(env.dir + "/"))
        after.add_id(env.unit + path.substr(env.dir.size()), entry.id);
    }
    for (const Change& change : diff_plans(before, after).changes) {
      if (change.action != Action::Replace) continue;
      std::string local = change.address.substr(env.unit.size() + 1);
      for (const PlanObject& object : env.applied->objects) {
        if (object.address == local && allow(change.address, object, "replace")) {
          replaced[local] = object;
          destroyed.insert(change.address);
        }
      }
    }
  }

  auto object_input = [&](const PlanObject& object, bool labelled) -> std::optional<Step> {
    std::string path = object_path(env.dir, object);
    std::optional<std::string> yaml = env.files.read(path);
    if (!yaml) {
      diagnostics.report(Code::E0607, {},
                         "`" + path + "` is listed in plan.json but not committed");
      return std::nullopt;
    }
    try {
      return apply_step(object_json(*yaml, labelled ? kPartOf : "", parent.id), path, object,
                        plan.env);
    } catch (const std::exception& error) {
      diagnostics.report(Code::E0607, {},
                         "`" + path + "` is not one Kubernetes object: " + error.what());
      return std::nullopt;
    }
  };

  for (const PlanObject& object : plan.objects) {
    if (!object.admin) continue;
    std::optional<Step> step = object_input(object, false);
    if (!step) return std::nullopt;
    steps.push_back(std::move(*step));
  }

  std::set<std::string> kinds = group_kinds(plan);
  std::set<std::string> all_kinds = kinds;
  if (env.applied) all_kinds.merge(group_kinds(*env.applied));
  PlanObject parent_object;
  parent_object.namespace_ = plan.namespace_;
  steps.push_back(apply_step(applyset_parent_json(parent, all_kinds), "", parent_object, plan.env));

  const bool build = build_inputs_changed(env);
  for (const PlanObject& object : plan.objects) {
    if (object.admin) continue;
    auto old = replaced.find(object.address);
    if (old != replaced.end()) steps.push_back(delete_step(old->second, parent.id));
    std::optional<Step> step = object_input(object, !object.shared);
    if (!step) return std::nullopt;
    steps.push_back(std::move(*step));
    if (object.kind == "BuildConfig" && build) {
      Step start;
      start.client = Client::Oc;
      start.args = {"start-build", object.name, "-n", object.namespace_, "--wait"};
      start.waits = true;
      steps.push_back(std::move(start));
    }
    if (object.kind == "StatefulSet") {
      Step rollout;
      rollout.args = {"rollout", "status",          "statefulset/" + object.name,
                      "-n",      object.namespace_, "--timeout=" + options.timeout};
      rollout.waits = true;
      steps.push_back(std::move(rollout));
    }
  }

  // Prune: only objects recorded as applied by this env, last in, first out.
  if (env.applied) {
    std::set<std::string> current;
    for (const PlanObject& object : plan.objects) current.insert(object.address);
    std::vector<PlanObject> gone;
    for (const PlanObject& object : env.applied->objects) {
      if (current.count(object.address) == 0) gone.push_back(object);
    }
    std::reverse(gone.begin(), gone.end());
    for (const PlanObject& object : gone) {
      if (object.shared && options.shared_in_use.count(shared_key(object)) != 0) continue;
      std::string address =
          object.admin ? env.unit.substr(0, env.unit.find('/')) + "/_admin/" + object.address
                       : env.unit + "/" + object.address;
      if (!allow(address, object, "delete")) continue;
      destroyed.insert(address);
      steps.push_back(delete_step(object, parent.id));
    }
  }
  if (all_kinds != kinds)
    steps.push_back(apply_step(applyset_parent_json(parent, kinds), "", parent_object, plan.env));
  if (refused) return std::nullopt;
  return steps;
}

}  // namespace mlenv::plan
