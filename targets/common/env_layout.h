#pragma once
// The names, ports and labels every object of one env agrees on, derived once from the IR so
// that builders (of any target) never derive a name twice or differently.

#include <map>
#include <string>
#include <vector>

#include "compiler/ir/program.h"

namespace mlenv::target {

/// One tool exposed through an authenticating proxy, a Service and a Route (or Ingress).
struct ExposedService {
  ir::Service service;
  std::string name;               ///< "vscode"
  int app_port = 0;               ///< where the tool listens, on 127.0.0.1 only
  int proxy_port = 0;             ///< where its proxy listens; the only port the Service targets
  std::string object_name;        ///< Service and Route name: `<env>-<name>`
  std::string tls_secret;         ///< the serving certificate the service CA writes for the proxy
  std::vector<std::string> argv;  ///< how mlenv-boot starts the tool
};

inline constexpr int kDebugpyPort = 5678;
/// Where mlenv-boot writes the shell environment that `oc exec`/`oc rsh` shells source.
inline constexpr const char* kShellEnvDir = "/run/mlenv";
/// Where the pod's Multus network-status annotation is mounted for mlenv-boot.
inline constexpr const char* kPodInfoDir = "/etc/podinfo";
/// Seconds mlenv-boot waits between SIGTERM and SIGKILL of its children (boot.json grace_s).
inline constexpr int kStopGraceSeconds = 30;

struct EnvLayout {
  const ir::Env* env = nullptr;
  std::string cluster;  ///< output directory of the cluster
  std::string dir;      ///< `<cluster>/<env>`
  std::string namespace_name;
  std::string workload;          ///< StatefulSet (dev env) or Job (run) name: the env name
  bool is_job = false;           ///< a run: an Indexed Job that finishes
  std::string headless_service;  ///< `<env>-headless`
  std::string service_account;   ///< `cluster.security.service_account` or `<env>-sa`
  std::string boot_config_map;   ///< `<env>-boot`
  /// The main container runs as UID 0 with IPC_LOCK added: RDMA on a runtime that does not
  /// already grant unlimited memlock (a capability added to a non-root UID is not effective).
  bool root_with_ipc_lock = false;
  /// The env's pods get an RDMA device through attachments (annotation, resources, podinfo).
  bool rdma_attached = false;
  std::string job_token_secret;  ///< optional Secret holding MLENV_JOB_TOKEN
  /// The tools the env's image carries: the image's own, then those its `services` and
  /// `debug` need (the Dockerfile installs them).
  std::vector<std::string> image_tools;
  /// The image the env runs, as the platform builds and stores it (image_object_name): one per
  /// distinct Dockerfile, shared by every env that runs it.
  std::string image_name;
  std::string image_tag;  ///< `<image_name>:<image tag>`
  /// The ServiceAccount is the cluster's (`security.service_account`), shared by its envs.
  bool shared_service_account = false;
  std::vector<ExposedService> services;
  std::map<std::string, std::string> labels;  ///< on every object of the env alone
  /// On objects the envs of a namespace share (Object::shared): they name no env or cluster.
  std::map<std::string, std::string> shared_labels;
  std::map<std::string, std::string> selector;  ///< selects the env's pods
};

/// The name an env's image is built and stored under: the image declaration's name (an
/// inline image's is its env's) as a DNS label of at most 40 characters, plus `-` and 6 hex
/// digits of the SHA-256 of the tools the env adds (`services`, `debug`) when it adds any: envs
/// whose Dockerfiles are the same bytes share the name, and two that differ never do.
std::string image_object_name(const ir::Image& image, const std::vector<std::string>& tools);

/// Derives the layout of `env`.
EnvLayout make_layout(const ir::Env& env);

/// The text of a service (`vscode`).
const char* service_name(ir::Service service);

}  // namespace mlenv::target
