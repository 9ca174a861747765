#include "targets/kube/builders.h"

namespace mlenv::target::kube {

Object service_account(const EnvLayout& layout,
                       const std::map<std::string, std::string>& annotations) {
  Object o = make_object("v1", "ServiceAccount", layout.service_account, layout.namespace_name,
                         layout.shared_service_account ? layout.shared_labels : layout.labels,
                         annotations);
  o.order = ApplyOrder::ClusterAdmin;
  o.shared = layout.shared_service_account;
  return o;
}

}  // namespace mlenv::target::kube
