#include "targets/kubernetes/kubernetes_target.h"

#include <algorithm>

#include "targets/common/assembly.h"
#include "targets/common/dockerfile.h"
#include "targets/common/yaml_writer.h"
#include "targets/kube/builders.h"
#include "targets/kube/env_output.h"
#include "targets/kube/port_forward.h"
#include "targets/kube/rules.h"
#include "targets/kubernetes/jobset.h"

namespace mlenv::target::kubernetes {
namespace {

// Kueue's labels and annotation (https://kueue.sigs.k8s.io/docs/reference/labels-and-annotations/).
constexpr const char* kQueueLabel = "kueue.x-k8s.io/queue-name";
constexpr const char* kPriorityLabel = "kueue.x-k8s.io/priority-class";
constexpr const char* kRequiredTopology = "kueue.x-k8s.io/podset-required-topology";

// The env's labels plus Kueue's queue and priority: Kueue admits the whole JobSet or
// StatefulSet at once (gang admission), or not at all.
std::map<std::string, std::string> workload_labels(const EnvLayout& layout) {
  std::map<std::string, std::string> labels = layout.labels;
  if (!layout.env->queue.empty()) labels[kQueueLabel] = layout.env->queue;
  if (!layout.env->priority.empty()) labels[kPriorityLabel] = layout.env->priority;
  return labels;
}

kube::PodExtras pod_extras(const EnvLayout& layout) {
  kube::PodExtras extras;
  extras.image = registry_image(layout);
  // Non-root pods run as the image's user, and a block volume's root is root-owned 0755:
  // without fsGroup they cannot write their claims (/workspace is also HOME).
  if (!layout.root_with_ipc_lock) extras.fs_group = kImageUid;
  extras.pull_secret = layout.env->image.pull_secret;
  std::string networks = kube::networks_annotation(layout);
  if (!networks.empty()) extras.annotations["k8s.v1.cni.cncf.io/networks"] = networks;
  // Every pod of the env in one topology domain (a node, a rack, a block): Kueue's Topology
  // Aware Scheduling admits the pod set only where it fits in one.
  if (!layout.env->cluster.topology.empty()) {
    extras.annotations[kRequiredTopology] = layout.env->cluster.topology;
  }
  return extras;
}

Object workload(const EnvLayout& layout, const std::string& boot_json) {
  kube::PodExtras extras = pod_extras(layout);
  kube::add_boot_digest(extras, boot_json);
  if (layout.is_job) return kube::jobset(layout, extras, workload_labels(layout));
  Object o = kube::statefulset(layout, extras);
  if (Value* labels = o.body.find("metadata")->find("labels")) {
    *labels = string_map(workload_labels(layout));
  }
  return o;
}

BootPlacement placement(const EnvLayout& layout) {
  if (!layout.is_job) return kube::pod_placement(layout);
  return {"JOB_COMPLETION_INDEX", kube::jobset_rank0_host(layout), ""};
}

// What apply does besides applying objects: build and push the image, then wait (PLAN_JSON.md).
PlanActions plan_actions(const EnvLayout& layout) {
  PlanActions steps;
  add_job_token_secret(steps, layout);
  plan::PlanAction& push = steps.actions.emplace_back();
  push.action = "push";
  push.after = "ServiceAccount/" + layout.service_account;
  push.image = registry_image(layout);
  push.dockerfile = layout.dir + "/Dockerfile";
  plan::PlanAction& wait = steps.actions.emplace_back();
  wait.action = layout.is_job ? "complete" : "rollout";
  wait.after = std::string(layout.is_job ? "JobSet/" : "StatefulSet/") + layout.workload;
  return steps;
}

// What the cluster must have for the env: controllers and the namespace's Pod Security level.
std::vector<Note> cluster_notes(const EnvLayout& layout) {
  std::vector<Note> notes;
  const ir::Env& env = *layout.env;
  if (layout.is_job) {
    notes.push_back({"",
                     "runs are JobSets: the JobSet controller v0.6.0 or newer "
                     "(jobset.x-k8s.io/v1alpha2, failure policy rules) must be installed on "
                     "the cluster"});
  }
  if (!env.queue.empty()) {
    notes.push_back({"",
                     "queues are Kueue's: Kueue must be installed, with a LocalQueue per "
                     "`queue` in the env's namespace (and a WorkloadPriorityClass per "
                     "`priority`, a Topology for `topology`)"});
  }
  if (layout.root_with_ipc_lock) {
    // Baseline admits no added capability but the defaults, and IPC_LOCK is not one of them
    // (https://kubernetes.io/docs/concepts/security/pod-security-standards/#baseline).
    notes.push_back(
        {"", "RDMA pods run as root with IPC_LOCK: namespace `" + layout.namespace_name +
                 "` needs the Pod Security level `privileged` (baseline forbids "
                 "IPC_LOCK): kubectl label namespace " +
                 layout.namespace_name + " pod-security.kubernetes.io/enforce=privileged"});
  }
  return notes;
}

std::vector<Note> env_notes(const EnvLayout& layout) {
  std::vector<Note> notes = cluster_notes(layout);
  for (Note& note : kube::storage_notes(layout)) notes.push_back(std::move(note));
  if (!layout.env->transport_note.empty()) {
    notes.push_back({layout.dir, layout.env->transport_note});
  }
  notes.push_back({layout.dir, "apply builds and pushes " + registry_image(layout) +
                                   " with podman, buildah or docker from the output root"});
  const std::string& secret = layout.env->image.pull_secret;
  notes.push_back({layout.dir, secret.empty()
                                   ? "the nodes pull " + layout.env->image.registry +
                                         " with their own credentials; a private registry needs "
                                         "`image.pull_secret`"
                                   : "pods pull with Secret `" + secret +
                                         "`: kubectl create secret "
                                         "docker-registry " +
                                         secret + " -n " + layout.namespace_name +
                                         " --docker-server=<registry host> ..."});
  if (!layout.services.empty()) {
    kube::PortForward forward = kube::port_forward(layout, kube::kJobSetRun, {});
    notes.push_back({layout.dir, "its tools have no Route on Kubernetes: mlenvc port-forward, or " +
                                     kube::port_forward_command(layout, forward)});
  }
  return notes;
}

// The node label whose every domain is one node.
constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

// E0540: a required topology of one node per domain (`kubernetes.io/hostname`) asks Kueue for
// all the env's pods on one node, and their required anti-affinity allows one pod per node:
// no domain ever fits the pod set, and the run waits in its queue for ever.
bool check_hostname_topology(const ir::Env& env, Diagnostics& diagnostics) {
  if (env.cluster.topology != kHostnameLabel || env.nodes < 2) return false;
  diagnostics.report(Code::E0540, env.range,
                     "env `" + env.name + "` runs " + std::to_string(env.nodes) +
                         " pods, one per node, and the cluster's `topology = \"" +
                         std::string(kHostnameLabel) +
                         "\"` asks Kueue for all of them on one node: it never admits the run",
                     "name a level holding several nodes (a rack or block label), or drop the "
                     "cluster's `topology`");
  return true;
}

// E0540: Kueue's topology-aware scheduling places pods by free resources and ignores the pods'
// required anti-affinity (kueue pkg/cache/scheduler/tas_flavor_snapshot.go), so only pods that
// fill a node's GPUs are sure to land one per node.
void check_topology(const ir::Env& env, Diagnostics& diagnostics) {
  const int per_node = env.cluster.gpus.per_node;
  if (check_hostname_topology(env, diagnostics)) return;
  if (env.cluster.topology.empty() || env.nodes < 2 || (per_node > 0 && env.gpus == per_node)) {
    return;
  }
  diagnostics.report(Code::E0540, env.range,
                     "env `" + env.name + "` takes " + std::to_string(env.gpus) + " of a node's " +
                         std::to_string(per_node) + " GPUs on " + std::to_string(env.nodes) +
                         " nodes, and Kueue's topology placement (`" + env.cluster.topology +
                         "`) may put two of its pods on one node",
                     "set `gpus = " + std::to_string(per_node) +
                         "` (whole nodes), or drop the cluster's `topology`");
}

void check_env(const EnvLayout& layout, Diagnostics& diagnostics) {
  kube::check_pinned_image(*layout.env, diagnostics);
  check_topology(*layout.env, diagnostics);
  kube::check_names(layout, kube::kJobSetRun, diagnostics);
  kube::check_ports(layout, diagnostics);
}

EnvOutput render_env(const EnvLayout& layout, const PlanContext& context, bool tree) {
  Diagnostics diagnostics;
  check_env(layout, diagnostics);
  std::string boot = boot_json(layout, placement(layout));
  std::vector<Object> objects = env_objects(layout, boot);
  kube::check_rails(layout, objects, diagnostics);
  const std::string build =
      "podman build -f <this Dockerfile> -t " + registry_image(layout) + " <output root>";
  EnvOutput out = kube::env_output(
      layout, objects, {{"Dockerfile", dockerfile(layout, build)}, {"boot.json", std::move(boot)}},
      plan_actions(layout), context, tree);
  out.diagnostics = std::move(diagnostics);
  out.notes = env_notes(layout);
  return out;
}

}  // namespace

std::string registry_image(const EnvLayout& layout) {
  return layout.env->image.registry + "/" + layout.image_tag;
}

std::vector<Object> env_objects(const EnvLayout& layout, const std::string& boot_json) {
  std::vector<Object> objects;
  objects.push_back(kube::service_account(layout, {}));
  for (Object& o : kube::network_attachments(layout)) objects.push_back(std::move(o));
  for (Object& o : kube::rwx_claims(layout)) objects.push_back(std::move(o));
  objects.push_back(kube::boot_config_map(layout, boot_json));
  objects.push_back(kube::headless_service(layout));
  objects.push_back(workload(layout, boot_json));
  // Nothing outside the env reaches its pods: tools are reached with port-forward, which the
  // API server tunnels past NetworkPolicy.
  objects.push_back(kube::network_policy(layout, Value()));
  std::stable_sort(objects.begin(), objects.end(), [](const Object& a, const Object& b) {
    return static_cast<int>(a.order) < static_cast<int>(b.order);
  });
  return objects;
}

std::vector<std::string> KubernetesTarget::check(const ir::Program& program,
                                                 Diagnostics& diagnostics) const {
  kube::SharedObjectsCheck shared;
  std::vector<Note> notes;
  for (const ir::Env& env : program.envs) {
    EnvLayout layout = make_layout(env);
    check_env(layout, diagnostics);
    shared.add(layout, diagnostics);
    for (Note& note : cluster_notes(layout)) notes.push_back(std::move(note));
  }
  return grouped(notes);
}

namespace {

EnvOutput render_one(const std::vector<EnvLayout>& layouts, std::size_t i,
                     const PlanContext& context, bool tree) {
  return render_env(layouts[i], context, tree);
}

}  // namespace

Output KubernetesTarget::render(const ir::Program& program, Diagnostics& diagnostics,
                                Scope scope) const {
  return render_program(program, ir::Platform::kubernetes, scope, diagnostics, render_one,
                        &kube::kAdminIndex);
}

std::vector<std::string> KubernetesTarget::stream(const ir::Program& program,
                                                  Diagnostics& diagnostics,
                                                  const ObjectSink& write) const {
  // No Kubernetes object is the platform team's: there is no admin pass.
  return stream_program(program, ir::Platform::kubernetes, diagnostics, render_one, {}, write);
}

}  // namespace mlenv::target::kubernetes
