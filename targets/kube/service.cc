#include "targets/kube/builders.h"

namespace mlenv::target::kube {
namespace {

Value port(const char* name, int number, Value target) {
  Value p = Value::map();
  p.set("name", name);
  p.set("protocol", "TCP");
  p.set("port", number);
  p.set("targetPort", std::move(target));
  return p;
}

}  // namespace

Object headless_service(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  Object o =
      make_object("v1", "Service", layout.headless_service, layout.namespace_name, layout.labels);
  o.order = ApplyOrder::Service;
  Value& spec = o.body.set("spec", Value::map());
  spec.set("clusterIP", "None");
  spec.set("publishNotReadyAddresses", true);
  spec.set("selector", string_map(layout.selector));
  Value& ports = spec.set("ports", Value::seq());
  ports.push(port("master", env.master_port, env.master_port));
  ports.push(port("rdzv", env.rdzv_port, env.rdzv_port));
  return o;
}

Object exposed_service(const EnvLayout& layout, const ExposedService& service,
                       const std::map<std::string, std::string>& annotations) {
  Object o = make_object("v1", "Service", service.object_name, layout.namespace_name, layout.labels,
                         annotations);
  o.order = ApplyOrder::Service;
  Value& spec = o.body.set("spec", Value::map());
  spec.set("type", "ClusterIP");
  // Tools run on the first pod only (seeds/000: "VSCode only on master"): select it by the
  // label its controller gives it.
  std::map<std::string, std::string> selector = layout.selector;
  if (layout.is_job) {
    selector.emplace("batch.kubernetes.io/job-completion-index", "0");
  } else {
    selector.emplace("statefulset.kubernetes.io/pod-name", layout.workload + "-0");
  }
  spec.set("selector", string_map(selector));
  spec.set("ports", Value::seq()).push(port("proxy", service.proxy_port, "px-" + service.name));
  return o;
}

}  // namespace mlenv::target::kube
