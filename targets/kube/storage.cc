#include "targets/kube/builders.h"

namespace mlenv::target::kube {
namespace {

struct Volume {
  const char* name;
  const ir::Quantity* size;
  const std::string* existing_claim;  ///< mounted instead of a new claim
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

// The volumes for which the env mounts a new RWX claim (not an existing one).
std::vector<Volume> rwx_volumes(const ir::Env& env) {
  std::vector<Volume> out;
  if (env.storage.mode != ir::StorageMode::rwx || env.kind == ir::EnvKind::acceptance) return out;
  for (const Volume& v : volumes(env)) {
    if (!v.size->text.empty() && v.existing_claim->empty()) out.push_back(v);
  }
  return out;
}

// `a`, `a` and `b`: the claims' names for a note.
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "`" : i + 1 == names.size() ? " and `" : ", `") + names[i] + "`";
  return out;
}

}  // namespace

std::string rwx_claim_name(const ir::Env& env, const std::string& volume) {
  return (env.storage.own ? env.name : env.cluster.name) + "-" + volume;
}

std::vector<Object> rwx_claims(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  std::vector<Object> out;
  for (const Volume& v : rwx_volumes(env)) {
    // The cluster's claims are one object every env of the namespace applies (Object::shared):
    // none labels it as its own, and one env's removal does not delete it.
    Object o =
        make_object("v1", "PersistentVolumeClaim", rwx_claim_name(env, v.name),
                    layout.namespace_name, env.storage.own ? layout.labels : layout.shared_labels);
    o.order = ApplyOrder::Storage;
    o.shared = !env.storage.own;
    o.body.set("spec", claim_spec("ReadWriteMany", env.storage.class_name, *v.size));
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<Note> storage_notes(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  std::vector<std::string> names;
  for (const Volume& v : rwx_volumes(env)) names.push_back(rwx_claim_name(env, v.name));
  if (names.empty()) return {};
  // Notes with one text are printed once, after the envs they concern: the envs that share.
  if (!env.storage.own) {
    return {{layout.dir, "share the claims " + listed(names) + " of cluster `" + env.cluster.name +
                             "` in namespace `" + layout.namespace_name +
                             "` (ReadWriteMany); an env's own `storage` block gives it its own"}};
  }
  return {{layout.dir, "its own claims " + listed(names) +
                           " (its `storage` block), which no "
                           "other env mounts"}};
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
