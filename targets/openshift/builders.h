#pragma once
// Builders of the OpenShift-only objects of an env: the IPC_LOCK SCC and its grant, Routes,
// the oauth-proxy sidecars, ImageStream and BuildConfig.

#include <map>
#include <string>
#include <vector>

#include "targets/common/env_layout.h"
#include "targets/common/object.h"
#include "targets/kube/builders.h"

namespace mlenv::target::openshift {

/// The SCC the compiler emits for RDMA when a cluster names none: adds only IPC_LOCK.
inline constexpr const char* kIpcLockScc = "mlenv-ipc-lock";
/// The SCC TCP pods run under (OpenShift's default for authenticated users).
inline constexpr const char* kRestrictedScc = "restricted-v2";

/// The one SecurityContextConstraints an env's pods may use (pinned by annotation).
struct Scc {
  std::string name;
  bool emitted = false;  ///< the compiler's own IPC_LOCK SCC (RDMA, the cluster names none)
};
/// Picks it from the layout: IPC_LOCK for RDMA containers running as root, else restricted-v2.
Scc env_scc(const EnvLayout& layout);

/// The cluster-scoped SCC that adds only IPC_LOCK to restricted-v2 (needs cluster-admin).
Object ipc_lock_scc(const std::map<std::string, std::string>& labels);
/// A Role with `use` on exactly the env's SCC, and its RoleBinding to the env's SA.
std::vector<Object> scc_grant(const EnvLayout& layout, const Scc& scc);

/// The reencrypting, redirecting Route to one exposed tool's Service (its proxy serves the
/// service CA's certificate).
Object route(const EnvLayout& layout, const ExposedService& service);
/// The ServiceAccount annotations that let oauth-proxy redirect back to each Route.
std::map<std::string, std::string> oauth_redirect_annotations(const EnvLayout& layout);
/// The oauth-proxy sidecars and the volume holding their cookie secret (a reference only).
void add_oauth_proxies(const EnvLayout& layout, kube::PodExtras& extras);
/// The Secret the proxies read their cookie secret from: never emitted (no secret is ever
/// written to git); `mlenvc apply` creates it when missing (plan.json `secrets`).
std::string cookie_secret_name(const EnvLayout& layout);

/// The image reference of the env's ImageStreamTag in the internal registry.
std::string internal_image(const EnvLayout& layout);
/// The ImageStream the BuildConfig pushes to, shared by the envs that run the image.
Object image_stream(const EnvLayout& layout);
/// The binary-source Docker BuildConfig, shared by the envs that run the image: `oc
/// start-build <image> --from-dir=<context>`.
Object build_config(const EnvLayout& layout);
/// The oauth-proxy image, pinned by tag (its own sample manifest uses `latest`; SEC-11).
inline constexpr const char* kOauthProxyImage =
    "registry.redhat.io/openshift4/ose-oauth-proxy-rhel9:v4.17";

}  // namespace mlenv::target::openshift
