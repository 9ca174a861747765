#pragma once
// The rules only OpenShift's objects need (codes E0424, E0502, E0503 in
// compiler/diag/codes_target.def); the rest are kube's (targets/kube/rules.h).

#include <vector>

#include "compiler/diag/diagnostic.h"
#include "targets/common/env_layout.h"
#include "targets/common/object.h"

namespace mlenv::target::openshift {

/// E0502: an env with services keeps its authenticating proxy.
void check_exposure(const ir::Env& env, Diagnostics& diagnostics);
/// The rules that need the layout's ports and names: kube::check_ports and check_route_hosts.
void check_layout(const EnvLayout& layout, Diagnostics& diagnostics);
/// E0424: the first label of each Route's default host, `<route>-<namespace>`, fits 63.
void check_route_hosts(const EnvLayout& layout, Diagnostics& diagnostics);
/// E0503: no Route reaches a Service port that leads to debugpy.
void check_routes(const ir::Env& env, const std::vector<Object>& objects, Diagnostics& diagnostics);

}  // namespace mlenv::target::openshift
