#pragma once
// Builders of the plain Kubernetes objects of an env. They take an EnvLayout and return
// objects; OpenShift-only pieces (admission, Route, builds, oauth-proxy) live in
// targets/openshift/ and are passed in as PodExtras, so a plain Kubernetes target reuses these.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "targets/common/assembly.h"
#include "targets/common/boot_json.h"
#include "targets/common/env_layout.h"
#include "targets/common/object.h"

namespace mlenv::target::kube {

/// What a target adds to the env's pod template besides the main container.
struct PodExtras {
  std::string image;                               ///< the main container's image reference
  std::vector<Value> sidecars;                     ///< containers after the main one
  std::vector<Value> volumes;                      ///< volumes the sidecars need
  std::map<std::string, std::string> annotations;  ///< pod template annotations
  /// The pod's fsGroup: the kubelet makes the claims' roots group-writable for it; none where
  /// the platform's admission assigns one or the pod runs as root.
  std::optional<std::int64_t> fs_group;
  std::string pull_secret;  ///< the pods' imagePullSecrets entry, "" for none
};

/// The env's ServiceAccount (never `default`, SEC-12).
Object service_account(const EnvLayout& layout,
                       const std::map<std::string, std::string>& annotations);

/// The name of the RWX claim of `volume` (`workspace`, `datasets`): `<cluster>-<volume>` for
/// the cluster's storage, which its envs share, `<env>-<volume>` for an env's own block.
std::string rwx_claim_name(const ir::Env& env, const std::string& volume);
/// The new RWX claims the env mounts (`rwx` storage mode); empty for `per_pod`. The cluster's
/// are Object::shared by its envs in the namespace; an env's own block gives claims of its own.
std::vector<Object> rwx_claims(const EnvLayout& layout);
/// For `build` and `plan`: which claims the env shares with which envs, or has of its own.
std::vector<Note> storage_notes(const EnvLayout& layout);
/// The StatefulSet's volumeClaimTemplates (`per_pod` storage mode); empty for `rwx`.
Value claim_templates(const EnvLayout& layout);

/// The placement of a StatefulSet (rank from the hostname ordinal) or an Indexed Job
/// (JOB_COMPLETION_INDEX): rank 0 is `<workload>-0.<headless>.<namespace>.svc` for both.
BootPlacement pod_placement(const EnvLayout& layout);

/// The ConfigMap `<env>-boot` holding boot.json.
Object boot_config_map(const EnvLayout& layout, const std::string& boot_json);

/// The pod template annotation holding the SHA-256 of the env's boot.json. The kubelet never
/// restarts a pod for a changed ConfigMap, and mlenv-boot reads its config once at start: the
/// digest in the template makes a changed config a changed template, so a StatefulSet rolls
/// its pods and a run's workload is re-created (a Job's template cannot change in place).
inline constexpr const char* kBootConfigAnnotation = "mlenv.dev/boot-config-sha256";

/// Adds the kBootConfigAnnotation of `boot_json` to the pod template's annotations.
void add_boot_digest(PodExtras& extras, const std::string& boot_json);

/// The headless Service: peers resolve before readiness (`publishNotReadyAddresses`).
Object headless_service(const EnvLayout& layout);
/// The Service in front of one exposed tool: targets only the proxy port, and only pod 0.
Object exposed_service(const EnvLayout& layout, const ExposedService& service,
                       const std::map<std::string, std::string>& annotations);

/// One NetworkAttachmentDefinition per SR-IOV rail (rails that name a `network`).
std::vector<Object> network_attachments(const EnvLayout& layout);

/// `check`'s rule on the objects that envs of a namespace share (E0413): each env's SR-IOV
/// attachments and rwx claims are added in turn, and an env's own claims named like shared ones
/// are caught too. Attachments are a function of the rails and the namespace alone, and a
/// cluster's claims of the cluster and the namespace, so an env that brings nothing new on its
/// API server and namespace adds nothing: a fleet builds each cluster's objects once, not once
/// per env.
class SharedObjectsCheck {
 public:
  void add(const EnvLayout& layout, Diagnostics& diagnostics);

 private:
  void add_attachments(const EnvLayout& layout, Diagnostics& diagnostics);
  void add_claims(const EnvLayout& layout, Diagnostics& diagnostics);

  SharedObjects shared_;
  /// The distinct rails added, by API server and namespace.
  std::map<std::string, std::vector<const std::vector<ir::Rail>*>> added_;
  /// The clusters whose shared claims were added, by API server, namespace and cluster.
  std::set<std::string> claims_added_;
};
/// The `k8s.v1.cni.cncf.io/networks` annotation value (JSON list), "" without SR-IOV rails.
std::string networks_annotation(const EnvLayout& layout);
/// SR-IOV device-plugin resources the pod requests: one unit per rail.
std::map<std::string, int> rail_resources(const EnvLayout& layout);
/// Default-deny ingress except `ingress_peer` to the proxy ports (none when it is null or the
/// env exposes nothing) and the env's pods to each other.
Object network_policy(const EnvLayout& layout, Value ingress_peer);

/// The pod template every workload of the env runs: mlenv-boot, the sidecars, the volumes.
Value pod_template(const EnvLayout& layout, const PodExtras& extras);
/// The StatefulSet of a dev env: pods that stay up with their services.
Object statefulset(const EnvLayout& layout, const PodExtras& extras);
/// The Indexed Job of a run: one pod per node that finishes, restarted only as a gang.
Object job(const EnvLayout& layout, const PodExtras& extras);
/// The spec of the Indexed Job whose pods are the run's nodes, for a Job of its own and for a
/// Job a platform's run workload replicates (Kubernetes runs). `ttl` (seconds) is
/// the Job's ttlSecondsAfterFinished (the replicating workload has its own).
Value indexed_job_spec(const EnvLayout& layout, const PodExtras& extras, int backoff_limit,
                       std::optional<std::int64_t> ttl);
/// The pod template of a StatefulSet, a Job, or a workload of replicated Jobs (the first
/// one's), or nullptr.
const Value* pod_template_of(const Object& workload);
/// The env's workload: a Job for a run, a StatefulSet for a dev env.
Object workload(const EnvLayout& layout, const PodExtras& extras);

/// Who a container runs as.
enum class ContainerUser {
  Assigned,     ///< the UID admission assigns (restricted-v2), never root
  RootIpcLock,  ///< UID 0 with only IPC_LOCK: the one way the capability is effective
  Nobody,       ///< UID 65534, for sidecars of a pod whose admission assigns no UID (RunAsAny)
};
/// The UID of `nobody`, which sidecars run as beside a root RDMA container.
inline constexpr int kNobodyUid = 65534;
/// The container securityContext: no privilege escalation, every capability dropped, and for
/// RootIpcLock exactly IPC_LOCK added back.
Value container_security(ContainerUser user);
/// The pod's terminationGracePeriodSeconds: longer than mlenv-boot's worst-case stop.
int termination_grace_seconds();
/// Where an acceptance run writes results.json in the pod.
std::string acceptance_results_path(const EnvLayout& layout);

/// `kustomization.yaml` listing `resources` in apply order.
std::string kustomization(const std::vector<std::string>& resources);

/// A cluster's `_admin/kustomization.yaml` (kustomize refuses files outside a kustomization's
/// root, so `_admin/` has its own), for assemble.
inline constexpr AdminIndex kAdminIndex = {"kustomization.yaml", &kustomization};

}  // namespace mlenv::target::kube
