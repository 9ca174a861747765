#include "targets/common/yaml_writer.h"
#include "targets/kube/builders.h"

namespace mlenv::target::kube {

std::string kustomization(const std::vector<std::string>& resources) {
  Value doc = Value::map();
  doc.set("apiVersion", "kustomize.config.k8s.io/v1beta1");
  doc.set("kind", "Kustomization");
  doc.set("resources", Value::strings(resources));
  return to_yaml(doc);
}

}  // namespace mlenv::target::kube
