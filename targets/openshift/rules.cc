#include "targets/openshift/rules.h"

#include <string>

#include "targets/kube/rules.h"

namespace mlenv::target::openshift {
namespace {

bool leads_to_debugpy(const Value& port) {
  const Value* target = port.find("targetPort");
  const Value* number = port.find("port");
  if (number && number->kind() == Value::Kind::Int && number->as_int() == kDebugpyPort) {
    return true;
  }
  if (!target) return false;
  if (target->kind() == Value::Kind::Int) return target->as_int() == kDebugpyPort;
  return target->kind() == Value::Kind::String && target->as_string() == "debugpy";
}

}  // namespace

void check_exposure(const ir::Env& env, Diagnostics& diagnostics) {
  if (env.auth != ir::Auth::none || env.services.empty()) return;
  SourceRange at = env.services_range.valid() ? env.services_range : env.range;
  diagnostics.report(Code::E0502, at, "env `" + env.name + "` exposes services with `auth = none`",
                     "every exposed service needs the oauth-proxy");
}

void check_route_hosts(const EnvLayout& layout, Diagnostics& diagnostics) {
  const ir::Env& env = *layout.env;
  // OpenShift's router names a Route without `host` `<name>-<namespace>.<apps domain>`; the
  // first label is a DNS label (RFC 1035 2.3.4, 63 octets), and admission rejects a longer one.
  for (const ExposedService& s : layout.services) {
    std::string label = s.object_name + "-" + layout.namespace_name;
    if (label.size() <= kube::kDnsLabelMax) continue;
    diagnostics.report(Code::E0424, env.range,
                       "Route host label `" + label + "` is " + std::to_string(label.size()) +
                           " characters, more than 63",
                       "shorten the env name or the namespace");
  }
}

void check_layout(const EnvLayout& layout, Diagnostics& diagnostics) {
  kube::check_ports(layout, diagnostics);
  check_route_hosts(layout, diagnostics);
}

void check_routes(const ir::Env& env, const std::vector<Object>& objects,
                  Diagnostics& diagnostics) {
  for (const Object& route : objects) {
    if (route.kind != "Route") continue;
    const Value* to = kube::value_at(route.body, {"spec", "to", "name"});
    if (!to) continue;
    for (const Object& service : objects) {
      if (service.kind != "Service" || service.name != to->as_string()) continue;
      const Value* ports = kube::value_at(service.body, {"spec", "ports"});
      if (!ports) continue;
      for (const Value& port : ports->items()) {
        if (!leads_to_debugpy(port)) continue;
        diagnostics.report(
            Code::E0503, env.range,
            "Route `" + route.name + "` of env `" + env.name + "` would expose debugpy",
            "debugpy is reachable only with `oc port-forward`");
      }
    }
  }
}

}  // namespace mlenv::target::openshift
