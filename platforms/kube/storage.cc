#include "platforms/kube/builders.h"

namespace mlenv::target::kube {
namespace {

struct Volume {
  const char* name;
  const ir::Quantity* size;
  const std::string* existing_claim;  ///< mounted instead of a claim of the env's own
};

std::vector<Volume> volumes(const ir::Env& env) {
  return {{"workspace", &env.storage.workspace, &env.storage.workspace_claim},
          {"datasets", &env.storage.datasets, &env.storage.datasets_claim}};
}

Value claim_spec(const char* access, const std::string& class_name, const ir::Quantity& size) {
  Value spec = Value::map();
  spec.set("accessModes", Value::strings({access}));
  if (!class_name.empty()) spec.set("storageClassName", class_name);
  Value& resources = spec.set("resources", Value::map());
  resources.set("requests", Value::map()).set("storage", size.text);
  return spec;
}

}  // namespace

std::vector<Object> shared_claims(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  std::vector<Object> out;
  if (env.storage.mode != ir::StorageMode::rwx || env.kind == ir::EnvKind::acceptance) return out;
  for (const Volume& v : volumes(env)) {
    if (v.size->text.empty() || !v.existing_claim->empty()) continue;
    Object o = make_object("v1", "PersistentVolumeClaim", env.name + "-" + v.name,
                           layout.namespace_name, layout.labels);
    o.order = ApplyOrder::Storage;
    o.body.set("spec", claim_spec("ReadWriteMany", env.storage.class_name, *v.size));
    out.push_back(std::move(o));
  }
  return out;
}

Value claim_templates(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  Value out = Value::seq();
  if (env.storage.mode != ir::StorageMode::per_pod) return out;
  for (const Volume& v : volumes(env)) {
    if (v.size->text.empty() || !v.existing_claim->empty()) continue;
    Value& t = out.push(Value::map());
    Value& meta = t.set("metadata", Value::map());
    meta.set("name", v.name);
    meta.set("labels", string_map(layout.labels));
    t.set("spec", claim_spec("ReadWriteOnce", env.storage.class_name, *v.size));
  }
  return out;
}

}  // namespace mlenv::target::kube
