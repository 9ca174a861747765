#include "targets/kube/plan_json.h"

#include <algorithm>

#include "compiler/base/sha256.h"
#include "compiler/base/version.h"
#include "targets/common/json_writer.h"

namespace mlenv::target::kube {

Value plan_inputs(const std::vector<ir::InputFile>& files) {
  std::vector<const ir::InputFile*> sorted;
  for (const ir::InputFile& f : files) sorted.push_back(&f);
  std::sort(sorted.begin(), sorted.end(),
            [](const ir::InputFile* a, const ir::InputFile* b) { return a->path < b->path; });
  Value out = Value::seq();
  for (const ir::InputFile* f : sorted) {
    Value& item = out.push(Value::map());
    item.set("path", f->path);
    item.set("sha256", sha256_hex(f->text));
  }
  return out;
}

std::string plan_json(const EnvLayout& layout, const PlanContext& context,
                      const std::vector<PlannedObject>& objects,
                      const std::vector<PlannedFile>& files, const PlanSteps& steps) {
  const ir::Env& env = *layout.env;
  Value doc = Value::map();
  doc.set("format_version", 1);
  doc.set("compiler_version", kCompilerVersion);
  doc.set("target", context.target);
  doc.set("source", context.source);
  doc.set("cluster", layout.cluster);
  doc.set("env", env.name);
  doc.set("namespace", layout.namespace_name);
  doc.set("transport", env.transport == ir::Transport::rdma ? "rdma" : "tcp");
  doc.set("transport_note", env.transport_note);
  doc.set("env_kind", env.kind == ir::EnvKind::dev   ? "dev"
                      : env.kind == ir::EnvKind::run ? "run"
                                                     : "acceptance");
  // What the day-2 commands need (compiler/plan/day2/): the ranks, whether every pod mounts the
  // same /workspace, and the ports `mlenvc port-forward` reaches in rank 0's pod.
  doc.set("nodes", env.nodes);
  doc.set("storage", env.storage.mode == ir::StorageMode::rwx ? "rwx" : "per_pod");
  Value& ports = doc.set("ports", Value::map());
  if (env.debug) ports.set("debugpy", kDebugpyPort);
  for (const ExposedService& service : layout.services) ports.set(service.name, service.app_port);
  doc.set("inputs", context.inputs);
  Value& out = doc.set("objects", Value::seq());
  for (const PlannedObject& p : objects) {
    const Object& o = *p.object;
    Value& item = out.push(Value::map());
    item.set("address", o.address());
    item.set("api_version", o.api_version);
    item.set("kind", o.kind);
    item.set("namespace", o.namespace_name);
    item.set("name", o.name);
    item.set("file", p.file);
    item.set("sha256", p.sha256);
    item.set("order", static_cast<int>(o.order));
    item.set("admin", o.admin);
    item.set("shared", o.shared);
  }
  doc.set("secrets", steps.secrets);
  doc.set("grants", steps.grants);
  doc.set("actions", steps.actions);
  Value& listed = doc.set("files", Value::seq());
  for (const PlannedFile& f : files) {
    Value& item = listed.push(Value::map());
    item.set("path", f.path);
    item.set("sha256", f.sha256);
  }
  return to_json_file(doc);
}

}  // namespace mlenv::target::kube
