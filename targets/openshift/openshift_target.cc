#include "targets/openshift/openshift_target.h"

#include <algorithm>
#include <map>

#include "targets/common/assembly.h"
#include "targets/common/dockerfile.h"
#include "targets/common/yaml_writer.h"
#include "targets/kube/env_output.h"
#include "targets/kube/rules.h"
#include "targets/openshift/builders.h"
#include "targets/openshift/rules.h"

namespace mlenv::target::openshift {
namespace {

void append(std::vector<Object>& to, std::vector<Object> from) {
  for (Object& o : from) to.push_back(std::move(o));
}

}  // namespace

std::vector<Object> admin_objects(const EnvLayout& layout) {
  std::vector<Object> objects;
  const Scc scc = env_scc(layout);
  // The SCC serves every cluster declaration on its API server: it names none of them. A
  // cluster that names its own SCC gets no admin objects: the grant is the platform team's.
  if (scc.emitted) {
    objects.push_back(ipc_lock_scc(layout.shared_labels));
    append(objects, scc_grant(layout, scc));
  }
  return objects;
}

std::vector<Object> env_objects(const EnvLayout& layout, const std::string& boot_json,
                                const std::map<std::string, std::string>& account_annotations) {
  std::vector<Object> objects = admin_objects(layout);
  const Scc scc = env_scc(layout);
  objects.push_back(kube::service_account(layout, account_annotations));
  append(objects, kube::network_attachments(layout));
  append(objects, kube::rwx_claims(layout));
  objects.push_back(kube::boot_config_map(layout, boot_json));
  objects.push_back(image_stream(layout));
  objects.push_back(build_config(layout));
  objects.push_back(kube::headless_service(layout));
  for (const ExposedService& s : layout.services) {
    // The service CA writes the proxy's serving certificate into this Secret.
    objects.push_back(kube::exposed_service(
        layout, s, {{"service.beta.openshift.io/serving-cert-secret-name", s.tls_secret}}));
  }
  kube::PodExtras extras;
  extras.image = internal_image(layout);
  // Pin the SCC so admission cannot pick a more permissive one the SA may also use (SCC-03).
  extras.annotations["openshift.io/required-scc"] = scc.name;
  std::string networks = kube::networks_annotation(layout);
  if (!networks.empty()) extras.annotations["k8s.v1.cni.cncf.io/networks"] = networks;
  add_oauth_proxies(layout, extras);
  kube::add_boot_digest(extras, boot_json);
  objects.push_back(kube::workload(layout, extras));
  for (const ExposedService& s : layout.services) objects.push_back(route(layout, s));
  Value router = Value::map();
  router.set("namespaceSelector", Value::map())
      .set("matchLabels", Value::map())
      .set("policy-group.network.openshift.io/ingress", "");
  objects.push_back(kube::network_policy(layout, std::move(router)));
  std::stable_sort(objects.begin(), objects.end(), [](const Object& a, const Object& b) {
    return static_cast<int>(a.order) < static_cast<int>(b.order);
  });
  return objects;
}

std::vector<std::string> OpenShiftTarget::check(const ir::Program& program,
                                                Diagnostics& diagnostics) const {
  // The rules a program can break. check_rails and check_routes guard the target's own
  // objects (no program reaches them), so they run only where objects are built: render.
  // Of the shared objects only attachments and claims can disagree: ServiceAccounts are merged.
  kube::SharedObjectsCheck shared;
  for (const ir::Env& env : program.envs) {
    kube::check_pinned_image(env, diagnostics);
    check_exposure(env, diagnostics);
    EnvLayout layout = make_layout(env);
    kube::check_names(layout, kube::kIndexedJobRun, diagnostics);
    check_layout(layout, diagnostics);
    shared.add(layout, diagnostics);
  }
  // What the platform team must apply or grant is printed by `build` and `plan`, with the
  // objects it concerns.
  return {};
}

namespace {

// What apply does for the env besides applying objects (PLAN_JSON.md).
PlanActions plan_actions(const EnvLayout& layout) {
  PlanActions steps;
  add_job_token_secret(steps, layout);
  if (!layout.services.empty())
    steps.secrets.push_back({cookie_secret_name(layout), "cookie_secret", 32, false});
  if (layout.root_with_ipc_lock)
    steps.grants.push_back({env_scc(layout).name, layout.service_account});
  plan::PlanAction& build = steps.actions.emplace_back();
  build.action = "build";
  build.after = "BuildConfig/" + layout.image_name;
  build.build_config = layout.image_name;
  build.image_stream_tag = layout.image_tag;
  build.image = internal_image(layout);
  plan::PlanAction& wait = steps.actions.emplace_back();
  wait.action = layout.is_job ? "complete" : "rollout";
  wait.after = std::string(layout.is_job ? "Job/" : "StatefulSet/") + layout.workload;
  return steps;
}

// Lines for people about what the env needs from the platform team.
std::vector<Note> env_notes(const EnvLayout& layout) {
  std::vector<Note> notes = kube::storage_notes(layout);
  // The transport decision of `network = auto`, made visible where the plan is reviewed.
  if (!layout.env->transport_note.empty()) {
    notes.push_back({layout.dir, layout.env->transport_note});
  }
  if (!layout.root_with_ipc_lock) return notes;
  const Scc scc = env_scc(layout);
  if (scc.emitted) {
    notes.push_back({"", "the platform team applies " + layout.cluster +
                             "/_admin/ once (mlenvc apply --admin): SCC `" + scc.name +
                             "` and the grants of its `use` to the envs' ServiceAccounts in "
                             "namespace `" +
                             layout.namespace_name + "`"});
  } else {
    notes.push_back({"", "the platform team grants `use` of SCC `" + scc.name + "` to `" +
                             layout.service_account + "` (oc adm policy add-scc-to-user " +
                             scc.name + " -z " + layout.service_account + " -n " +
                             layout.namespace_name + "); apply checks it"});
  }
  return notes;
}

EnvOutput render_env(const EnvLayout& layout,
                     const std::map<std::string, std::string>& account_annotations,
                     const PlanContext& context, bool tree) {
  const ir::Env& env = *layout.env;
  Diagnostics diagnostics;
  kube::check_pinned_image(env, diagnostics);
  check_exposure(env, diagnostics);
  kube::check_names(layout, kube::kIndexedJobRun, diagnostics);
  check_layout(layout, diagnostics);
  std::string boot = boot_json(layout, kube::pod_placement(layout));
  std::vector<Object> objects = env_objects(layout, boot, account_annotations);
  kube::check_rails(layout, objects, diagnostics);
  check_routes(env, objects, diagnostics);

  EnvOutput out = kube::env_output(
      layout, objects,
      {{"Dockerfile",
        // The image's BuildConfig finds `Dockerfile` at the root of what is uploaded.
        dockerfile(layout, "oc start-build " + layout.image_name +
                               " --from-dir=DIR, DIR holding this Dockerfile and _runtime/")},
       {"boot.json", std::move(boot)}},
      plan_actions(layout), context, tree);
  out.diagnostics = std::move(diagnostics);
  out.notes = env_notes(layout);
  return out;
}

// Envs sharing a ServiceAccount share its redirect annotations: each env's SA carries all.
class AccountAnnotations {
 public:
  // The env renderer of render_program and stream_program, given the annotations of every env
  // (prepare(), which they call first).
  EnvRenderer renderer() const {
    return [this](const std::vector<EnvLayout>& layouts, std::size_t i, const PlanContext& context,
                  bool tree) {
      const EnvLayout& layout = layouts[i];
      return render_env(layout, layout.shared_service_account ? merged_.at(key(layout)) : own_[i],
                        context, tree);
    };
  }
  void prepare(const std::vector<EnvLayout>& layouts) {
    for (const EnvLayout& layout : layouts) {
      const auto& mine = own_.emplace_back(oauth_redirect_annotations(layout));
      if (layout.shared_service_account) merged_[key(layout)].insert(mine.begin(), mine.end());
    }
  }

 private:
  static std::string key(const EnvLayout& l) {
    return l.env->cluster.api + " " + l.namespace_name + " " + l.service_account;
  }
  std::vector<std::map<std::string, std::string>> own_;
  std::map<std::string, std::map<std::string, std::string>> merged_;
};

}  // namespace

Output OpenShiftTarget::render(const ir::Program& program, Diagnostics& diagnostics,
                               Scope scope) const {
  AccountAnnotations accounts;
  return render_program(program, ir::Platform::openshift, scope, diagnostics, accounts.renderer(),
                        &kube::kAdminIndex,
                        [&](const std::vector<EnvLayout>& layouts) { accounts.prepare(layouts); });
}

std::vector<std::string> OpenShiftTarget::stream(const ir::Program& program,
                                                 Diagnostics& diagnostics,
                                                 const ObjectSink& write) const {
  AccountAnnotations accounts;
  auto admin = [](const EnvLayout& layout) {
    return kube::admin_output(layout, admin_objects(layout));
  };
  return stream_program(program, ir::Platform::openshift, diagnostics, accounts.renderer(), admin,
                        write,
                        [&](const std::vector<EnvLayout>& layouts) { accounts.prepare(layouts); });
}

}  // namespace mlenv::target::openshift
