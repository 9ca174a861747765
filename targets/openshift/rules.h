#pragma once
// The rules of the language that need the target's names or emitted objects (codes E0411,
// E0412, E0502, E0503, E0504 in compiler/diag/codes_target.def).

#include <vector>

#include "compiler/diag/diagnostic.h"
#include "targets/common/env_layout.h"
#include "targets/common/object.h"

namespace mlenv::target::openshift {

/// E0504: the base image names a tag other than `latest`, or a digest.
void check_pinned_image(const ir::Env& env, Diagnostics& diagnostics);
/// E0502: an env with services keeps its authenticating proxy.
void check_exposure(const ir::Env& env, Diagnostics& diagnostics);
/// E0411: StatefulSet name, pod hostnames and the headless Service fit their DNS limits.
void check_names(const EnvLayout& layout, Diagnostics& diagnostics);
/// The rules that need the layout's ports and names: check_ports and check_route_hosts.
void check_layout(const EnvLayout& layout, Diagnostics& diagnostics);
/// E0423: the rendezvous and master ports differ from each other and from every other port
/// a container of the pod listens on (tools, their oauth-proxies, debugpy).
void check_ports(const EnvLayout& layout, Diagnostics& diagnostics);
/// E0424: the first label of each Route's default host, `<route>-<namespace>`, fits 63.
void check_route_hosts(const EnvLayout& layout, Diagnostics& diagnostics);
/// E0412: networks annotation entries, NetworkAttachmentDefinitions and SR-IOV resource units
/// each equal the number of rails (or are all zero without SR-IOV).
void check_rails(const EnvLayout& layout, const std::vector<Object>& objects,
                 Diagnostics& diagnostics);
/// E0413: `env` emits the shared object at `address` (Object::shared) with other bytes than
/// `first` did, in the same namespace of the same API server.
void report_shared_conflict(const std::string& address, const std::string& namespace_name,
                            const ir::Env& env, const ir::Env& first, Diagnostics& diagnostics);
/// E0503: no Route reaches a Service port that leads to debugpy.
void check_routes(const ir::Env& env, const std::vector<Object>& objects, Diagnostics& diagnostics);

}  // namespace mlenv::target::openshift
