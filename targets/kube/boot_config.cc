#include "targets/kube/builders.h"

#include "compiler/base/sha256.h"

namespace mlenv::target::kube {

BootPlacement pod_placement(const EnvLayout& layout) {
  // An Indexed Job's pod hostname is `<job>-<index>` and with `subdomain` it resolves as
  // `<hostname>.<subdomain>.<namespace>.svc`, as a StatefulSet pod does
  // (https://kubernetes.io/docs/concepts/workloads/controllers/job/#completion-mode).
  BootPlacement placement;
  placement.rank_env = layout.is_job ? "JOB_COMPLETION_INDEX" : "";
  placement.rendezvous_host =
      layout.workload + "-0." + layout.headless_service + "." + layout.namespace_name + ".svc";
  return placement;
}

Object boot_config_map(const EnvLayout& layout, const std::string& boot_json) {
  Object o =
      make_object("v1", "ConfigMap", layout.boot_config_map, layout.namespace_name, layout.labels);
  o.order = ApplyOrder::Config;
  o.body.set("data", Value::map()).set("boot.json", boot_json);
  return o;
}

void add_boot_digest(PodExtras& extras, const std::string& boot_json) {
  extras.annotations[kBootConfigAnnotation] = sha256_hex(boot_json);
}

}  // namespace mlenv::target::kube
