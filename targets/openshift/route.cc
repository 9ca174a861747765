#include "compiler/base/sha256.h"
#include "targets/common/json_writer.h"
#include "targets/openshift/builders.h"

namespace mlenv::target::openshift {

Object route(const EnvLayout& layout, const ExposedService& service) {
  Object o = make_object("route.openshift.io/v1", "Route", service.object_name,
                         layout.namespace_name, layout.labels);
  o.order = ApplyOrder::Route;
  Value& spec = o.body.set("spec", Value::map());
  Value& to = spec.set("to", Value::map());
  to.set("kind", "Service");
  to.set("name", service.object_name);
  to.set("weight", 100);
  spec.set("port", Value::map()).set("targetPort", "proxy");
  // The router terminates the client's TLS and opens a new TLS connection to the proxy, which
  // serves the certificate the service CA issued for its Service; the router trusts that CA
  // for reencrypt Routes without a destinationCACertificate. No key is ever written (EXP-05).
  Value& tls = spec.set("tls", Value::map());
  tls.set("termination", "reencrypt");
  tls.set("insecureEdgeTerminationPolicy", "Redirect");
  spec.set("wildcardPolicy", "None");
  return o;
}

namespace {

// An annotation's name is at most 63 characters, 24 of them `oauth-redirectreference.`: a
// longer Route name is cut, and kept unique by a hash of the whole.
std::string redirect_key(const std::string& route) {
  constexpr std::size_t kRoom = 63 - 24;
  if (route.size() <= kRoom) return route;
  return route.substr(0, kRoom - 9) + "-" + sha256_hex(route).substr(0, 8);
}

}  // namespace

std::map<std::string, std::string> oauth_redirect_annotations(const EnvLayout& layout) {
  std::map<std::string, std::string> out;
  for (const ExposedService& s : layout.services) {
    Value ref = Value::map();
    ref.set("kind", "OAuthRedirectReference");
    ref.set("apiVersion", "v1");
    Value& target = ref.set("reference", Value::map());
    target.set("kind", "Route");
    target.set("name", s.object_name);
    out["serviceaccounts.openshift.io/oauth-redirectreference." + redirect_key(s.object_name)] =
        to_json_compact(ref);
  }
  return out;
}

std::string cookie_secret_name(const EnvLayout& layout) {
  return layout.workload + "-oauth-cookie";
}

void add_oauth_proxies(const EnvLayout& layout, kube::PodExtras& extras) {
  if (layout.services.empty()) return;
  std::vector<Value> certs;  // each proxy's serving certificate, after the cookie volume
  for (const ExposedService& s : layout.services) {
    Value c = Value::map();
    c.set("name", "oauth-proxy-" + s.name);
    c.set("image", kOauthProxyImage);
    c.set("imagePullPolicy", "IfNotPresent");
    // Only users who may `update` this Service pass (the edit and admin roles): the tools are a
    // shell with the env's token and data, and the view role may `get` services. oauth-proxy
    // posts this as the user's own SubjectAccessReview (providers/openshift/provider.go).
    Value sar = Value::map();
    sar.set("namespace", layout.namespace_name);
    sar.set("resource", "services");
    sar.set("resourceName", s.object_name);
    sar.set("verb", "update");
    c.set("args", Value::strings(std::vector<std::string>{
                      "--provider=openshift",
                      "--openshift-service-account=" + layout.service_account,
                      "--openshift-sar=" + to_json_compact(sar),
                      "--upstream=http://127.0.0.1:" + std::to_string(s.app_port),
                      "--http-address=",
                      "--https-address=:" + std::to_string(s.proxy_port),
                      "--tls-cert=/etc/tls/" + s.name + "/tls.crt",
                      "--tls-key=/etc/tls/" + s.name + "/tls.key",
                      "--cookie-secure=true",
                      "--cookie-secret-file=/etc/oauth-proxy/cookie_secret",
                  }));
    Value& port = c.set("ports", Value::seq()).push(Value::map());
    port.set("name", "px-" + s.name);
    port.set("containerPort", s.proxy_port);
    port.set("protocol", "TCP");
    Value& probe = c.set("readinessProbe", Value::map());
    Value& get = probe.set("httpGet", Value::map());
    get.set("path", "/oauth/healthz");
    get.set("port", "px-" + s.name);
    get.set("scheme", "HTTPS");
    probe.set("periodSeconds", 10);
    Value& resources = c.set("resources", Value::map());
    for (const char* key : {"requests", "limits"}) {
      Value& r = resources.set(key, Value::map());
      r.set("cpu", "100m");
      r.set("memory", "128Mi");
    }
    // Beside a root RDMA container the SCC assigns no UID (RunAsAny): name a non-root one.
    c.set("securityContext",
          kube::container_security(layout.root_with_ipc_lock ? kube::ContainerUser::Nobody
                                                             : kube::ContainerUser::Assigned));
    Value& mounts = c.set("volumeMounts", Value::seq());
    Value& cookie = mounts.push(Value::map());
    cookie.set("name", "oauth-cookie");
    cookie.set("mountPath", "/etc/oauth-proxy");
    cookie.set("readOnly", true);
    Value& cert = mounts.push(Value::map());
    cert.set("name", s.name + "-tls");
    cert.set("mountPath", "/etc/tls/" + s.name);
    cert.set("readOnly", true);
    extras.sidecars.push_back(std::move(c));
    Value tls = Value::map();
    tls.set("name", s.name + "-tls");
    tls.set("secret", Value::map()).set("secretName", s.tls_secret);
    certs.push_back(std::move(tls));
  }
  Value v = Value::map();
  v.set("name", "oauth-cookie");
  Value& secret = v.set("secret", Value::map());
  secret.set("secretName", cookie_secret_name(layout));
  Value& item = secret.set("items", Value::seq()).push(Value::map());
  item.set("key", "cookie_secret");
  item.set("path", "cookie_secret");
  extras.volumes.push_back(std::move(v));
  for (Value& tls : certs) extras.volumes.push_back(std::move(tls));
}

}  // namespace mlenv::target::openshift
