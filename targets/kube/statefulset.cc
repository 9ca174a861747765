#include "targets/kube/builders.h"

namespace mlenv::target::kube {
namespace {

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

Value main_container(const EnvLayout& layout, const PodExtras& extras) {
  const ir::Env& env = *layout.env;
  Value c = Value::map();
  c.set("name", "mlenv");
  c.set("image", extras.image);
  c.set("imagePullPolicy", "IfNotPresent");
  c.set("command", Value::strings({"mlenv-boot", "--config", "/etc/mlenv/boot.json"}));
  Value& vars = c.set("env", Value::seq());
  vars.push(env_var("HOME", "/workspace"));
  // A per-job token from a Secret when one exists; mlenv-boot derives one otherwise.
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
  // GPUs and SR-IOV VFs only in limits: the device plugins' contract (SEC-10).
  if (env.gpus > 0) limits.set(env.cluster.gpus.resource, env.gpus);
  for (const auto& [name, count] : rail_resources(layout)) limits.set(name, count);

  c.set("securityContext", container_security(env.transport == ir::Transport::rdma));
  Value& mounts = c.set("volumeMounts", Value::seq());
  mounts.push(mount("boot-config", "/etc/mlenv", true));
  mounts.push(mount("dshm", "/dev/shm"));
  mounts.push(mount("tmp", "/tmp"));
  if (!env.storage.workspace.text.empty()) mounts.push(mount("workspace", "/workspace"));
  if (!env.storage.datasets.text.empty()) mounts.push(mount("datasets", "/datasets"));
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

}  // namespace

Value container_security(bool ipc_lock) {
  Value s = Value::map();
  s.set("allowPrivilegeEscalation", false);
  s.set("privileged", false);
  s.set("runAsNonRoot", true);
  Value& caps = s.set("capabilities", Value::map());
  caps.set("drop", Value::strings({"ALL"}));
  if (ipc_lock) caps.set("add", Value::strings({"IPC_LOCK"}));
  s.set("seccompProfile", Value::map()).set("type", "RuntimeDefault");
  return s;
}

Object statefulset(const EnvLayout& layout, const PodExtras& extras) {
  const ir::Env& env = *layout.env;
  Object o = make_object("apps/v1", "StatefulSet", layout.statefulset, layout.namespace_name,
                         layout.labels);
  o.order = ApplyOrder::Workload;
  Value& spec = o.body.set("spec", Value::map());
  spec.set("serviceName", layout.headless_service);
  spec.set("replicas", env.nodes);
  spec.set("podManagementPolicy", "Parallel");
  spec.set("selector", Value::map()).set("matchLabels", string_map(layout.selector));
  Value& retention = spec.set("persistentVolumeClaimRetentionPolicy", Value::map());
  retention.set("whenDeleted", "Retain");
  retention.set("whenScaled", "Retain");

  Value& tmpl = spec.set("template", Value::map());
  Value& meta = tmpl.set("metadata", Value::map());
  meta.set("labels", string_map(layout.labels));
  if (!extras.annotations.empty()) meta.set("annotations", string_map(extras.annotations));
  Value& pod = tmpl.set("spec", Value::map());
  pod.set("serviceAccountName", layout.service_account);
  pod.set("terminationGracePeriodSeconds", 60);
  if (!env.cluster.gpus.product.empty()) {
    pod.set("nodeSelector", Value::map()).set("nvidia.com/gpu.product", env.cluster.gpus.product);
  }
  pod.set("affinity", affinity(layout));
  Value& pod_security = pod.set("securityContext", Value::map());
  pod_security.set("runAsNonRoot", true);
  pod_security.set("seccompProfile", Value::map()).set("type", "RuntimeDefault");
  Value& containers = pod.set("containers", Value::seq());
  containers.push(main_container(layout, extras));
  for (const Value& sidecar : extras.sidecars) containers.push(sidecar);

  Value& volumes = pod.set("volumes", Value::seq());
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
  if (env.storage.mode == ir::StorageMode::rwx) {
    for (const char* name : {"workspace", "datasets"}) {
      const ir::Quantity& size =
          std::string_view(name) == "workspace" ? env.storage.workspace : env.storage.datasets;
      if (size.text.empty()) continue;
      Value& v = volumes.push(Value::map());
      v.set("name", name);
      v.set("persistentVolumeClaim", Value::map()).set("claimName", env.name + "-" + name);
    }
  }
  for (const Value& v : extras.volumes) volumes.push(v);
  Value templates = claim_templates(layout);
  if (templates.size() > 0) spec.set("volumeClaimTemplates", std::move(templates));
  return o;
}

}  // namespace mlenv::target::kube
