#include "targets/openshift/openshift_target.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/base/parallel.h"
#include "compiler/base/sha256.h"
#include "targets/common/yaml_writer.h"
#include "targets/kube/plan_json.h"
#include "targets/openshift/builders.h"
#include "targets/openshift/rules.h"
#include "targets/runtime_sources.h"

namespace mlenv::target::openshift {
namespace {

void append(std::vector<Object>& to, std::vector<Object> from) {
  for (Object& o : from) to.push_back(std::move(o));
}

// Objects several envs emit (Object::shared), by where they live on the API server: each must
// have the same bytes wherever it is emitted (E0413, reported once per object).
class SharedObjects {
 public:
  /// Whether this is the first env to emit the object.
  bool add(const EnvLayout& layout, const std::string& address, const std::string& bytes,
           Diagnostics& diagnostics) {
    std::string key = layout.env->cluster.api + " " + layout.namespace_name + " " + address;
    auto [first, added] = seen_.try_emplace(std::move(key), First{layout.env, bytes, false});
    if (added || first->second.bytes == bytes || first->second.reported) return added;
    report_shared_conflict(address, layout.namespace_name, *layout.env, *first->second.env,
                           diagnostics);
    first->second.reported = true;
    return false;
  }

 private:
  struct First {
    const ir::Env* env;
    std::string bytes;
    bool reported;
  };
  std::map<std::string, First> seen_;
};

// A cluster's `_admin/` objects: every env of the cluster emits them; one copy is written.
struct ClusterAdmin {
  std::vector<File> files;  ///< in first-seen order
  std::set<std::string> addresses;
};

// A line for people about `subject` (an env directory), grouped with the same text of others.
struct Note {
  std::string subject;
  std::string text;
};

// One line per distinct note, naming the envs it concerns (a fleet's 10,000 envs that fall back
// to TCP on one cluster make one line, not 10,000).
std::vector<std::string> grouped(const std::vector<Note>& notes) {
  constexpr std::size_t kNamed = 5;
  std::map<std::string, std::vector<std::string>> by_text;
  for (const Note& note : notes) by_text[note.text].push_back(note.subject);
  std::vector<std::string> out;
  for (auto& [text, subjects] : by_text) {
    std::sort(subjects.begin(), subjects.end());
    subjects.erase(std::unique(subjects.begin(), subjects.end()), subjects.end());
    if (subjects.size() == 1 && subjects[0].empty()) {
      out.push_back(text);
      continue;
    }
    std::string line;
    for (std::size_t i = 0; i < subjects.size() && i < kNamed; ++i) {
      line += (i ? ", " : "") + subjects[i];
    }
    if (subjects.size() > kNamed) {
      line += " and " + std::to_string(subjects.size() - kNamed) + " more";
    }
    out.push_back(line + ": " + text);
  }
  return out;
}

// What one env renders, before the program-wide merge.
struct EnvOutput {
  std::vector<File> files;  ///< `<cluster>/<env>/...`, its objects first, in apply order
  std::size_t objects = 0;  ///< how many of `files` are objects
  std::vector<std::pair<std::string, File>> admin;          ///< (address, `_admin/` file)
  std::vector<std::pair<std::string, std::size_t>> shared;  ///< (address, index in files)
  std::vector<Note> notes;
  Diagnostics diagnostics;
};

}  // namespace

std::vector<Object> env_objects(const EnvLayout& layout, const std::string& boot_json,
                                const std::map<std::string, std::string>& account_annotations) {
  std::vector<Object> objects;
  // The SCC serves every cluster declaration on its API server: it names none of them. A
  // cluster that names its own SCC gets no admin objects: the grant is the platform team's.
  if (layout.custom_scc) {
    objects.push_back(ipc_lock_scc(layout.shared_labels));
    append(objects, scc_grant(layout));
  }
  objects.push_back(kube::service_account(layout, account_annotations));
  append(objects, kube::network_attachments(layout));
  append(objects, kube::shared_claims(layout));
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
  extras.annotations["openshift.io/required-scc"] = layout.scc;
  std::string networks = kube::networks_annotation(layout);
  if (!networks.empty()) extras.annotations["k8s.v1.cni.cncf.io/networks"] = networks;
  add_oauth_proxies(layout, extras);
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

void OpenShiftTarget::check(const ir::Program& program, Diagnostics& diagnostics) const {
  // The rules a program can break. check_rails and check_routes guard the target's own
  // objects (no program reaches them), so they run only where objects are built: render.
  // Of the shared objects only attachments can disagree: ServiceAccounts are merged.
  SharedObjects shared;
  for (const ir::Env& env : program.envs) {
    check_pinned_image(env, diagnostics);
    check_exposure(env, diagnostics);
    EnvLayout layout = make_layout(env);
    check_names(layout, diagnostics);
    check_layout(layout, diagnostics);
    for (const Object& o : kube::network_attachments(layout)) {
      shared.add(layout, o.address(), to_yaml(o.body), diagnostics);
    }
  }
}

namespace {

// What apply does for the env besides applying objects (PLAN_JSON.md).
kube::PlanSteps plan_steps(const EnvLayout& layout) {
  kube::PlanSteps steps;
  if (!layout.services.empty()) {
    Value& secret = steps.secrets.push(Value::map());
    secret.set("name", cookie_secret_name(layout));
    secret.set("key", "cookie_secret");
    secret.set("random_bytes", 32);
  }
  if (layout.root_with_ipc_lock) {
    Value& grant = steps.grants.push(Value::map());
    grant.set("scc", layout.scc);
    grant.set("service_account", layout.service_account);
  }
  Value& build = steps.actions.push(Value::map());
  build.set("action", "build");
  build.set("after", "BuildConfig/" + layout.image_stream);
  build.set("build_config", layout.image_stream);
  build.set("image_stream_tag", layout.image_tag);
  build.set("image", internal_image(layout));
  Value& wait = steps.actions.push(Value::map());
  wait.set("action", layout.is_job ? "complete" : "rollout");
  wait.set("after", std::string(layout.is_job ? "Job/" : "StatefulSet/") + layout.workload);
  return steps;
}

// Lines for people about what the env needs from the platform team.
std::vector<Note> env_notes(const EnvLayout& layout) {
  std::vector<Note> notes;
  // The transport decision of `network = auto`, made visible where the plan is reviewed.
  if (!layout.env->transport_note.empty()) {
    notes.push_back({layout.dir, layout.env->transport_note});
  }
  if (!layout.root_with_ipc_lock) return notes;
  if (layout.custom_scc) {
    notes.push_back({"", "the platform team applies " + layout.cluster +
                             "/_admin/ once (mlenvc apply --admin): SCC `" + layout.scc +
                             "` and the grants of its `use` to the envs' ServiceAccounts in "
                             "namespace `" +
                             layout.namespace_name + "`"});
  } else {
    notes.push_back({"", "the platform team grants `use` of SCC `" + layout.scc + "` to `" +
                             layout.service_account + "` (oc adm policy add-scc-to-user " +
                             layout.scc + " -z " + layout.service_account + " -n " +
                             layout.namespace_name + "); apply checks it"});
  }
  return notes;
}

EnvOutput render_env(const EnvLayout& layout,
                     const std::map<std::string, std::string>& account_annotations,
                     const kube::PlanContext& context, bool tree) {
  const ir::Env& env = *layout.env;
  EnvOutput out;
  check_pinned_image(env, out.diagnostics);
  check_exposure(env, out.diagnostics);
  check_names(layout, out.diagnostics);
  check_layout(layout, out.diagnostics);
  std::string boot = kube::boot_json(layout);
  std::vector<Object> objects = env_objects(layout, boot, account_annotations);
  check_rails(layout, objects, out.diagnostics);
  check_routes(env, objects, out.diagnostics);

  std::vector<kube::PlannedObject> planned;
  std::vector<kube::PlannedFile> listed;
  std::vector<std::string> resources;
  for (const Object& o : objects) {
    std::string file = o.file_name();
    std::string bytes = to_yaml(o.body);
    std::string sha = tree ? sha256_hex(bytes) : "";
    if (o.admin) {
      planned.push_back({&o, "../_admin/" + file, std::move(sha)});
      out.admin.push_back({o.address(), {layout.cluster + "/_admin/" + file, std::move(bytes)}});
      continue;
    }
    if (o.shared) out.shared.emplace_back(o.address(), out.files.size());
    if (tree) {
      planned.push_back({&o, file, sha});
      listed.push_back({file, std::move(sha)});
      resources.push_back(file);
    }
    out.files.push_back({layout.dir + "/" + file, std::move(bytes)});
  }
  out.objects = out.files.size();
  if (tree) {
    auto add_file = [&](std::string name, std::string bytes) {
      listed.push_back({name, sha256_hex(bytes)});
      out.files.push_back({layout.dir + "/" + name, std::move(bytes)});
    };
    add_file("Dockerfile", dockerfile(layout));
    add_file("boot.json", std::move(boot));
    add_file("kustomization.yaml", kube::kustomization(resources));
    std::sort(listed.begin(), listed.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
    out.files.push_back({layout.dir + "/plan.json",
                         kube::plan_json(layout, context, planned, listed, plan_steps(layout))});
  }

  out.notes = env_notes(layout);
  return out;
}

}  // namespace

Output OpenShiftTarget::render(const ir::Program& program, Diagnostics& diagnostics,
                               Scope scope) const {
  const bool tree = scope == Scope::Tree;
  kube::PlanContext context;
  context.target = "openshift";
  context.source = program.source;
  if (tree) context.inputs = kube::plan_inputs(program.inputs);

  // Envs sharing a ServiceAccount share its redirect annotations: each env's SA carries all.
  const std::size_t n = program.envs.size();
  std::vector<EnvLayout> layouts;
  layouts.reserve(n);
  std::vector<std::map<std::string, std::string>> own(n);
  std::map<std::string, std::map<std::string, std::string>> merged;
  auto account_key = [](const EnvLayout& l) {
    return l.env->cluster.api + " " + l.namespace_name + " " + l.service_account;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const EnvLayout& layout = layouts.emplace_back(make_layout(program.envs[i]));
    own[i] = oauth_redirect_annotations(layout);
    if (layout.shared_service_account) {
      merged[account_key(layout)].insert(own[i].begin(), own[i].end());
    }
  }

  // Envs render independently (in parallel); what follows merges them in program order.
  std::vector<EnvOutput> rendered(n);
  parallel_for(n, [&](std::size_t i) {
    const EnvLayout& layout = layouts[i];
    rendered[i] =
        render_env(layout, layout.shared_service_account ? merged.at(account_key(layout)) : own[i],
                   context, tree);
  });

  Output out;
  std::vector<std::size_t> stream;  // env object files, in apply order within each env
  std::vector<Note> notes;
  std::map<std::string, ClusterAdmin> admin;
  SharedObjects shared;
  for (std::size_t i = 0; i < n; ++i) {
    EnvOutput& env = rendered[i];
    diagnostics.append(env.diagnostics);
    std::set<std::size_t> repeated;  // shared objects an earlier env put in the stream
    for (const auto& [address, index] : env.shared) {
      if (!shared.add(layouts[i], address, env.files[index].content, diagnostics)) {
        repeated.insert(index);
      }
    }
    for (auto& [address, file] : env.admin) {
      ClusterAdmin& cluster_admin = admin[layouts[i].cluster];
      if (cluster_admin.addresses.insert(address).second) {
        cluster_admin.files.push_back(std::move(file));
      }
    }
    for (std::size_t k = 0; k < env.files.size(); ++k) {
      if (k < env.objects && repeated.count(k) == 0) stream.push_back(out.files.size());
      out.files.push_back(std::move(env.files[k]));
    }
    notes.insert(notes.end(), env.notes.begin(), env.notes.end());
    env = EnvOutput();  // its memory is not needed twice
  }

  // Cluster-scoped objects first in the stream, once per cluster; then env objects in order.
  std::vector<std::size_t> admin_stream;
  for (auto& [cluster, a] : admin) {
    std::vector<std::string> resources;
    for (File& f : a.files) {
      resources.push_back(f.path.substr(cluster.size() + 8));  // strip `<cluster>/_admin/`
      admin_stream.push_back(out.files.size());
      out.files.push_back(std::move(f));
    }
    if (tree) {
      out.files.push_back({cluster + "/_admin/kustomization.yaml", kube::kustomization(resources)});
    }
  }
  if (tree && !program.envs.empty()) {
    out.files.push_back(kube::program_inputs_file(context));
    for (const auto& [path, bytes] : runtime_sources()) {
      out.files.push_back({std::string(kRuntimeDir) + "/" + std::string(path), std::string(bytes)});
    }
  }

  // Sort files by path, remapping the stream indices.
  std::vector<std::size_t> order(out.files.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return out.files[a].path < out.files[b].path; });
  std::vector<std::size_t> where(order.size());
  std::vector<File> sorted;
  sorted.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    where[order[i]] = i;
    sorted.push_back(std::move(out.files[order[i]]));
  }
  out.files = std::move(sorted);
  for (std::size_t i : admin_stream) out.stream.push_back(where[i]);
  for (std::size_t i : stream) out.stream.push_back(where[i]);
  out.notes = grouped(notes);
  std::set<std::pair<std::string, std::string>> listed;  // a cluster's note comes from each env
  for (Note& note : notes) {
    if (listed.emplace(note.subject, note.text).second)
      out.note_details.emplace_back(std::move(note.subject), std::move(note.text));
  }
  return out;
}

}  // namespace mlenv::target::openshift
