#include "targets/kube/builders.h"

#include <optional>

#include "targets/kube/rules.h"

namespace mlenv::target::kube {
namespace {

// mlenv-boot's exits that no restart heals (runtime/exit_code.h): a broken boot.json or an
// impossible configuration (kExitConfigError), and `network = rdma` on nodes that cannot use
// RDMA (kExitTransport), which a restart onto the same nodes would only repeat.
constexpr int kBootConfigError = 78;
constexpr int kBootTransportError = 73;
// mlenv-boot's exit when another node was taken away (runtime/exit_code.h kExitPeerLost): a
// node evicted or preempted tells the others so, or vanishes.
constexpr int kBootPeerLost = 76;

std::string quantity_or(const ir::Quantity& q, const char* fallback) {
  return q.text.empty() ? fallback : q.text;
}

Value env_var(const char* name, std::string value) {
  Value v = Value::map();
  v.set("name", name);
  v.set("value", std::move(value));
  return v;
}

Value container_port(const std::string& name, int number) {
  Value p = Value::map();
  p.set("name", name);
  p.set("containerPort", number);
  p.set("protocol", "TCP");
  return p;
}

Value mount(const char* name, const char* path, bool read_only = false) {
  Value m = Value::map();
  m.set("name", name);
  m.set("mountPath", path);
  if (read_only) m.set("readOnly", true);
  return m;
}

// The claim a volume mounts: an existing one, an RWX claim (its cluster's or its own), or none
// (a per-pod volumeClaimTemplate of the same name, which the StatefulSet controller adds).
std::string claim_of(const ir::Env& env, const std::string& volume) {
  const std::string& existing =
      volume == "workspace" ? env.storage.workspace_claim : env.storage.datasets_claim;
  if (!existing.empty()) return existing;
  const ir::Quantity& size = volume == "workspace" ? env.storage.workspace : env.storage.datasets;
  if (env.storage.mode == ir::StorageMode::rwx && !size.text.empty())
    return rwx_claim_name(env, volume);
  return "";
}

bool mounts_volume(const ir::Env& env, const std::string& volume) {
  if (env.kind == ir::EnvKind::acceptance) return false;
  const ir::Quantity& size = volume == "workspace" ? env.storage.workspace : env.storage.datasets;
  return !size.text.empty() || !claim_of(env, volume).empty();
}

Value boot_command(const EnvLayout& layout) {
  std::vector<std::string> argv = {"mlenv-boot", "--config", "/etc/mlenv/boot.json"};
  if (layout.env->kind == ir::EnvKind::acceptance) {
    argv.insert(argv.end(), {"--nccl-check", "--results", acceptance_results_path(layout)});
  }
  return Value::strings(argv);
}

Value main_container(const EnvLayout& layout, const PodExtras& extras) {
  const ir::Env& env = *layout.env;
  Value c = Value::map();
  c.set("name", "mlenv");
  c.set("image", extras.image);
  c.set("imagePullPolicy", "IfNotPresent");
  c.set("command", boot_command(layout));
  Value& vars = c.set("env", Value::seq());
  vars.push(env_var("HOME", "/workspace"));
  // The run's token, from the Secret apply creates (plan.json `secrets`); a node of several
  // refuses to start without it.
  Value& token = vars.push(Value::map());
  token.set("name", "MLENV_JOB_TOKEN");
  Value& ref = token.set("valueFrom", Value::map()).set("secretKeyRef", Value::map());
  ref.set("name", layout.job_token_secret);
  ref.set("key", "token");
  ref.set("optional", true);
  Value& ports = c.set("ports", Value::seq());
  ports.push(container_port("master", env.master_port));
  ports.push(container_port("rdzv", env.rdzv_port));
  if (env.debug) ports.push(container_port("debugpy", kDebugpyPort));

  Value& resources = c.set("resources", Value::map());
  std::string cpu = quantity_or(env.resources.cpu, "1");
  std::string memory = quantity_or(env.resources.memory, "4Gi");
  Value& requests = resources.set("requests", Value::map());
  requests.set("cpu", cpu);
  requests.set("memory", memory);
  Value& limits = resources.set("limits", Value::map());
  limits.set("cpu", cpu);
  limits.set("memory", memory);
  // GPUs and RDMA devices only in limits: the device plugins' contract (SEC-10).
  if (env.gpus > 0) limits.set(env.cluster.gpus.resource, env.gpus);
  for (const auto& [name, count] : rail_resources(layout)) limits.set(name, count);

  c.set("securityContext", container_security(layout.root_with_ipc_lock ? ContainerUser::RootIpcLock
                                                                        : ContainerUser::Assigned));
  Value& mounts = c.set("volumeMounts", Value::seq());
  mounts.push(mount("boot-config", "/etc/mlenv", true));
  mounts.push(mount("dshm", "/dev/shm"));
  mounts.push(mount("tmp", "/tmp"));
  mounts.push(mount("mlenv-run", kShellEnvDir));
  if (layout.rdma_attached) mounts.push(mount("podinfo", kPodInfoDir, true));
  if (mounts_volume(env, "workspace")) mounts.push(mount("workspace", "/workspace"));
  if (mounts_volume(env, "datasets")) mounts.push(mount("datasets", "/datasets"));
  return c;
}

Value affinity(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  Value a = Value::map();
  if (!env.cluster.nodes.empty()) {
    Value& term = a.set("nodeAffinity", Value::map())
                      .set("requiredDuringSchedulingIgnoredDuringExecution", Value::map())
                      .set("nodeSelectorTerms", Value::seq())
                      .push(Value::map());
    Value& expr = term.set("matchExpressions", Value::seq()).push(Value::map());
    expr.set("key", "kubernetes.io/hostname");
    expr.set("operator", "In");
    expr.set("values", Value::strings(env.cluster.nodes));
  }
  // One pod per node: GPUs and rails are per node, and the runtime counts one rank per pod.
  Value& term = a.set("podAntiAffinity", Value::map())
                    .set("requiredDuringSchedulingIgnoredDuringExecution", Value::seq())
                    .push(Value::map());
  term.set("labelSelector", Value::map()).set("matchLabels", string_map(layout.selector));
  term.set("topologyKey", "kubernetes.io/hostname");
  return a;
}

void add_volumes(const EnvLayout& layout, const PodExtras& extras, Value& volumes) {
  const ir::Env& env = *layout.env;
  Value& boot = volumes.push(Value::map());
  boot.set("name", "boot-config");
  boot.set("configMap", Value::map()).set("name", layout.boot_config_map);
  // /dev/shm defaults to 64 MiB; DataLoader workers and NCCL need far more (SEC-08).
  Value& shm = volumes.push(Value::map());
  shm.set("name", "dshm");
  Value& shm_dir = shm.set("emptyDir", Value::map());
  shm_dir.set("medium", "Memory");
  shm_dir.set("sizeLimit", quantity_or(env.resources.shm, "1Gi"));
  Value& tmp = volumes.push(Value::map());
  tmp.set("name", "tmp");
  tmp.set("emptyDir", Value::map());
  // The shell environment mlenv-boot writes for `oc exec`/`oc rsh` shells (a few hundred bytes).
  Value& run = volumes.push(Value::map());
  run.set("name", "mlenv-run");
  Value& run_dir = run.set("emptyDir", Value::map());
  run_dir.set("medium", "Memory");
  run_dir.set("sizeLimit", "1Mi");
  if (layout.rdma_attached) {
    // Multus writes the attached interfaces (with each VF's PCI address) into this annotation;
    // mlenv-boot maps every rail to the HCA the pod really got (HCA names differ per node).
    Value& info = volumes.push(Value::map());
    info.set("name", "podinfo");
    Value& item =
        info.set("downwardAPI", Value::map()).set("items", Value::seq()).push(Value::map());
    item.set("path", "network-status");
    item.set("fieldRef", Value::map())
        .set("fieldPath", "metadata.annotations['k8s.v1.cni.cncf.io/network-status']");
  }
  for (const char* name : {"workspace", "datasets"}) {
    std::string claim = claim_of(env, name);
    if (claim.empty() || !mounts_volume(env, name)) continue;
    Value& v = volumes.push(Value::map());
    v.set("name", name);
    v.set("persistentVolumeClaim", Value::map()).set("claimName", claim);
  }
  for (const Value& v : extras.volumes) volumes.push(v);
}

}  // namespace

Value container_security(ContainerUser user) {
  Value s = Value::map();
  s.set("allowPrivilegeEscalation", false);
  s.set("privileged", false);
  if (user == ContainerUser::RootIpcLock) {
    s.set("runAsUser", 0);
    s.set("runAsNonRoot", false);
  } else {
    if (user == ContainerUser::Nobody) s.set("runAsUser", kNobodyUid);
    s.set("runAsNonRoot", true);
  }
  Value& caps = s.set("capabilities", Value::map());
  caps.set("drop", Value::strings({"ALL"}));
  if (user == ContainerUser::RootIpcLock) caps.set("add", Value::strings({"IPC_LOCK"}));
  s.set("seccompProfile", Value::map()).set("type", "RuntimeDefault");
  return s;
}

int termination_grace_seconds() {
  // mlenv-boot stops in at most two grace periods: SIGTERM to its children, SIGKILL after
  // grace_s, and a stop already under way when the kubelet's SIGTERM arrives restarts it
  // (runtime/supervisor.cc). The kubelet's SIGKILL must come after both.
  return 2 * kStopGraceSeconds + 30;
}

std::string acceptance_results_path(const EnvLayout& layout) {
  return "/workspace/.mlenv/results/" + layout.env->name + ".json";
}

Value pod_template(const EnvLayout& layout, const PodExtras& extras) {
  const ir::Env& env = *layout.env;
  Value tmpl = Value::map();
  Value& meta = tmpl.set("metadata", Value::map());
  meta.set("labels", string_map(layout.labels));
  if (!extras.annotations.empty()) meta.set("annotations", string_map(extras.annotations));
  Value& pod = tmpl.set("spec", Value::map());
  if (layout.is_job) {
    // A finished run stays finished; failures restart the gang through the Job, not in place.
    pod.set("restartPolicy", "Never");
    // Indexed Job pods are named `<job>-<index>`; with the headless Service as subdomain they
    // resolve as `<job>-<index>.<headless>` like StatefulSet pods.
    pod.set("subdomain", layout.headless_service);
  }
  pod.set("serviceAccountName", layout.service_account);
  if (!extras.pull_secret.empty()) {
    pod.set("imagePullSecrets", Value::seq()).push(Value::map()).set("name", extras.pull_secret);
  }
  pod.set("terminationGracePeriodSeconds", termination_grace_seconds());
  if (!env.cluster.gpus.product.empty()) {
    pod.set("nodeSelector", Value::map()).set("nvidia.com/gpu.product", env.cluster.gpus.product);
  }
  pod.set("affinity", affinity(layout));
  Value& pod_security = pod.set("securityContext", Value::map());
  if (!layout.root_with_ipc_lock) pod_security.set("runAsNonRoot", true);
  if (extras.fs_group) {
    // The kubelet chowns each volume's root to fsGroup with g+rwx and setgid (volume ownership
    // management, pkg/volume/volume_linux.go SetVolumeOwnership); checking only the root first
    // keeps large datasets from a recursive walk at every start.
    pod_security.set("fsGroup", *extras.fs_group);
    pod_security.set("fsGroupChangePolicy", "OnRootMismatch");
  }
  pod_security.set("seccompProfile", Value::map()).set("type", "RuntimeDefault");
  Value& containers = pod.set("containers", Value::seq());
  containers.push(main_container(layout, extras));
  for (const Value& sidecar : extras.sidecars) containers.push(sidecar);
  add_volumes(layout, extras, pod.set("volumes", Value::seq()));
  return tmpl;
}

Object statefulset(const EnvLayout& layout, const PodExtras& extras) {
  const ir::Env& env = *layout.env;
  Object o =
      make_object("apps/v1", "StatefulSet", layout.workload, layout.namespace_name, layout.labels);
  o.order = ApplyOrder::Workload;
  Value& spec = o.body.set("spec", Value::map());
  spec.set("serviceName", layout.headless_service);
  spec.set("replicas", env.nodes);
  spec.set("podManagementPolicy", "Parallel");
  spec.set("selector", Value::map()).set("matchLabels", string_map(layout.selector));
  Value& retention = spec.set("persistentVolumeClaimRetentionPolicy", Value::map());
  retention.set("whenDeleted", "Retain");
  retention.set("whenScaled", "Retain");
  spec.set("template", pod_template(layout, extras));
  Value templates = claim_templates(layout);
  if (templates.size() > 0) spec.set("volumeClaimTemplates", std::move(templates));
  return o;
}

// `backoff_limit` counts failed pods (batch/v1 JobSpec).
Value indexed_job_spec(const EnvLayout& layout, const PodExtras& extras, int backoff_limit,
                       std::optional<std::int64_t> ttl) {
  const ir::Env& env = *layout.env;
  Value spec = Value::map();
  // One pod per node, all at once: the rendezvous waits for every node.
  spec.set("completionMode", "Indexed");
  spec.set("completions", env.nodes);
  spec.set("parallelism", env.nodes);
  spec.set("backoffLimit", backoff_limit);
  // A replacement pod starts only once the failed one is gone, so no index ever runs twice
  // with the same hostname (KEP-3939).
  spec.set("podReplacementPolicy", "Failed");
  Value& rules = spec.set("podFailurePolicy", Value::map()).set("rules", Value::seq());
  Value& fatal = rules.push(Value::map());
  fatal.set("action", "FailJob");
  Value& codes = fatal.set("onExitCodes", Value::map());
  codes.set("containerName", "mlenv");
  codes.set("operator", "In");
  Value& values = codes.set("values", Value::seq());
  values.push(kBootTransportError);
  values.push(kBootConfigError);
  // Evictions and preemptions are the cluster's doing: they do not use up the run's restarts.
  // The disrupted pod carries DisruptionTarget; every node stopped by another node's failure
  // or loss exits kBootPeerLost (runtime/supervisor.cc), whether it heard of it as a report or
  // as a dropped connection. Both are Ignore (batch/v1 podFailurePolicy: rules match in order;
  // Ignore neither counts towards backoffLimit nor fails the Job), so only the node whose own
  // command failed counts: one gang failure is one counted pod.
  Value& lost = rules.push(Value::map());
  lost.set("action", "Ignore");
  Value& lost_codes = lost.set("onExitCodes", Value::map());
  lost_codes.set("containerName", "mlenv");
  lost_codes.set("operator", "In");
  lost_codes.set("values", Value::seq()).push(kBootPeerLost);
  Value& disrupted = rules.push(Value::map());
  disrupted.set("action", "Ignore");
  disrupted.set("onPodConditions", Value::seq()).push(Value::map()).set("type", "DisruptionTarget");
  if (ttl) spec.set("ttlSecondsAfterFinished", *ttl);
  spec.set("template", pod_template(layout, extras));
  return spec;
}

Object job(const EnvLayout& layout, const PodExtras& extras) {
  const ir::Env& env = *layout.env;
  Object o = make_object("batch/v1", "Job", layout.workload, layout.namespace_name, layout.labels);
  o.order = ApplyOrder::Workload;
  // A failed node makes mlenv-boot end every node, and only the failed node's pod counts (the
  // others exit kBootPeerLost, ignored). But one fault can fail every node's own command in the
  // same second (an NCCL watchdog timeout under TORCH_NCCL_ASYNC_ERROR_HANDLING, a storage
  // hiccup), each pod counting (kubernetes pkg/controller/job/job_controller.go): a limit of
  // `restarts` ended such a run at its first failure (issue 31 item 5). `restarts` × nodes
  // counted pods is always at least `restarts` gang restarts; failures of single nodes may
  // restart the run up to that many times (schema/LANGUAGE.md says so).
  o.body.set("spec", indexed_job_spec(layout, extras, env.restarts * env.nodes, env.ttl_seconds));
  return o;
}

const Value* pod_template_of(const Object& workload) {
  const Value* spec = workload.body.find("spec");
  if (!spec) return nullptr;
  // A workload of replicated Jobs (Kubernetes' runs): the first one's.
  if (const Value* jobs = spec->find("replicatedJobs")) {
    if (jobs->size() == 0) return nullptr;
    spec = value_at(jobs->items()[0], {"template", "spec"});
    if (!spec) return nullptr;
  }
  return spec->find("template");
}

Object workload(const EnvLayout& layout, const PodExtras& extras) {
  return layout.is_job ? job(layout, extras) : statefulset(layout, extras);
}

}  // namespace mlenv::target::kube
