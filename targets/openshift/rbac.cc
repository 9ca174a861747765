#include "targets/openshift/builders.h"

namespace mlenv::target::openshift {

Scc env_scc(const EnvLayout& layout) {
  if (!layout.root_with_ipc_lock) return {kRestrictedScc, false};
  const std::string& named = layout.env->cluster.security.scc;
  return named.empty() ? Scc{kIpcLockScc, true} : Scc{named, false};
}

Object ipc_lock_scc(const std::map<std::string, std::string>& labels) {
  Object o =
      make_object("security.openshift.io/v1", "SecurityContextConstraints", kIpcLockScc, "", labels,
                  {{"kubernetes.io/description",
                    "restricted-v2, but the RDMA container may run as UID 0 with the "
                    "IPC_LOCK capability that memory registration needs; emitted by "
                    "mlenvc"}});
  o.admin = true;
  o.order = ApplyOrder::ClusterAdmin;
  Value& b = o.body;
  b.set("priority", 0);
  b.set("allowPrivilegedContainer", false);
  b.set("allowPrivilegeEscalation", false);
  b.set("allowHostDirVolumePlugin", false);
  b.set("allowHostIPC", false);
  b.set("allowHostNetwork", false);
  b.set("allowHostPID", false);
  b.set("allowHostPorts", false);
  b.set("readOnlyRootFilesystem", false);
  b.set("requiredDropCapabilities", Value::strings({"ALL"}));
  b.set("allowedCapabilities", Value::strings({"IPC_LOCK"}));
  b.set("defaultAddCapabilities", Value::seq());
  // A capability added to a non-root UID never reaches the effective set (Linux execve rules
  // without ambient capabilities, kubernetes/kubernetes#56374): the RDMA container runs as
  // UID 0, whose effective set is exactly the bounding set, IPC_LOCK alone. Pods pick their
  // UIDs explicitly (root for mlenv, 65534 for sidecars).
  b.set("runAsUser", Value::map()).set("type", "RunAsAny");
  b.set("seLinuxContext", Value::map()).set("type", "MustRunAs");
  b.set("fsGroup", Value::map()).set("type", "MustRunAs");
  b.set("supplementalGroups", Value::map()).set("type", "RunAsAny");
  b.set("seccompProfiles", Value::strings({"runtime/default"}));
  b.set("volumes", Value::strings({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                                   "persistentVolumeClaim", "projected", "secret"}));
  b.set("users", Value::seq());
  b.set("groups", Value::seq());
  return o;
}

std::vector<Object> scc_grant(const EnvLayout& layout, const Scc& scc) {
  std::string name = layout.workload + "-use-scc";
  Object role = make_object("rbac.authorization.k8s.io/v1", "Role", name, layout.namespace_name,
                            layout.labels);
  role.order = ApplyOrder::ClusterAdmin;
  // Granting `use` of an SCC needs that permission already (RBAC escalation check): the
  // platform team applies these with `mlenvc apply --admin`; a researcher's apply checks them.
  role.admin = true;
  Value& rule = role.body.set("rules", Value::seq()).push(Value::map());
  rule.set("apiGroups", Value::strings({"security.openshift.io"}));
  rule.set("resources", Value::strings({"securitycontextconstraints"}));
  rule.set("resourceNames", Value::strings({scc.name}));
  rule.set("verbs", Value::strings({"use"}));

  Object binding = make_object("rbac.authorization.k8s.io/v1", "RoleBinding", name,
                               layout.namespace_name, layout.labels);
  binding.order = ApplyOrder::ClusterAdmin;
  binding.admin = true;
  Value& ref = binding.body.set("roleRef", Value::map());
  ref.set("apiGroup", "rbac.authorization.k8s.io");
  ref.set("kind", "Role");
  ref.set("name", name);
  Value& subject = binding.body.set("subjects", Value::seq()).push(Value::map());
  subject.set("kind", "ServiceAccount");
  subject.set("name", layout.service_account);
  subject.set("namespace", layout.namespace_name);
  std::vector<Object> out;
  out.push_back(std::move(role));
  out.push_back(std::move(binding));
  return out;
}

}  // namespace mlenv::target::openshift
