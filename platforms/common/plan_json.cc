#include "platforms/common/plan_json.h"

#include <algorithm>

#include "compiler/base/file_name.h"
#include "compiler/base/sha256.h"
#include "compiler/base/version.h"
#include "platforms/common/json_writer.h"

namespace mlenv::target {
namespace {

// The env's declaration after merging, as lines of `key=value` in a fixed order: what its
// render reads. Source positions are left out, so editing another env's text above this one
// changes nothing here. A field added to ir::Env belongs here too (a conservative digest is
// fine: apply also compares every committed file with a fresh render byte for byte).
class EnvText {
 public:
  void add(const char* key, const std::string& value) {
    text_ += key;
    text_ += '=';
    text_ += std::to_string(value.size());  // length-prefixed: no value can fake a key
    text_ += ':';
    text_ += value;
    text_ += '\n';
  }
  void add(const char* key, long long value) { add(key, std::to_string(value)); }
  void add(const char* key, const std::vector<std::string>& values) {
    add(key, static_cast<long long>(values.size()));
    for (const std::string& value : values) add(key, value);
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

void add_storage(EnvText& t, const char* key, const ir::Storage& s) {
  t.add(key, static_cast<long long>(s.mode));
  t.add(key, s.class_name);
  t.add(key, s.workspace.text);
  t.add(key, s.datasets.text);
  t.add(key, s.workspace_claim);
  t.add(key, s.datasets_claim);
  // Only when set: the digests of envs on their cluster's storage stay what they were.
  if (s.own) t.add(key, "own");
}

void add_cluster(EnvText& t, const ir::Cluster& c) {
  t.add("cluster", c.name);
  t.add("cluster.platform", static_cast<long long>(c.platform));
  t.add("cluster.topology", c.topology);
  if (!c.runtime.empty()) t.add("cluster.runtime", c.runtime);  // plans before it: unchanged
  t.add("cluster.slurm", {c.slurm.partition, c.slurm.account, c.slurm.qos, c.slurm.time});
  t.add("cluster.api", c.api);
  t.add("cluster.namespace", c.namespace_name);
  t.add("cluster.nodes", c.nodes);
  t.add("cluster.gpus", static_cast<long long>(c.gpus.per_node));
  t.add("cluster.gpus", c.gpus.resource);
  t.add("cluster.gpus", c.gpus.product);
  add_storage(t, "cluster.storage", c.storage);
  for (const auto& [name, access] : c.classes)
    t.add("cluster.class", name + "=" + std::to_string(static_cast<int>(access)));
  t.add("cluster.tcp_interfaces", c.network.tcp_interfaces);
  if (c.network.rdma) {
    const ir::Rdma& rdma = *c.network.rdma;
    t.add("rdma.gid_index", rdma.gid_index.value_or(-1));
    t.add("rdma.gdr_level", rdma.gdr_level.value_or("-"));
    for (const ir::Rail& r : rdma.rails) {
      t.add("rail", {r.device, r.interface, std::to_string(static_cast<int>(r.link_layer)),
                     r.network, r.resource, std::to_string(static_cast<int>(r.attachment))});
      if (r.ipam) t.add("rail.ipam", {r.ipam->type, r.ipam->range});
      if (r.ipam) t.add("rail.ipam.exclude", r.ipam->exclude);
    }
  }
  t.add("security",
        {c.security.service_account, c.security.scc, c.security.unlimited_memlock ? "1" : "0"});
}

void add_image(EnvText& t, const ir::Image& i) {
  t.add("image", {i.name, i.from, i.tag, i.registry});
  t.add("image.apt", i.apt);
  t.add("image.pip", i.pip);
  t.add("image.tools", i.tools);
  for (const auto& [key, value] : i.env) t.add("image.env", {key, value});
  t.add("image.run", i.run);
}

std::string env_text(const ir::Env& e) {
  EnvText t;
  t.add("env", e.name);
  t.add("kind", static_cast<long long>(e.kind));
  add_cluster(t, e.cluster);
  add_image(t, e.image);
  t.add("shape",
        {std::to_string(e.nodes), std::to_string(e.gpus), std::to_string(e.nproc_per_node)});
  t.add("transport", {std::to_string(static_cast<int>(e.transport)), e.transport_auto ? "auto" : "",
                      e.transport_note});
  for (ir::Service s : e.services) t.add("service", static_cast<long long>(s));
  t.add("auth", static_cast<long long>(e.auth));
  t.add("debug", e.debug ? 1 : 0);
  t.add("command", e.command);
  t.add("launcher", e.launcher);
  std::vector<std::string> acceptance = {std::to_string(e.acceptance.min_busbw_gbps),
                                         std::to_string(e.acceptance.max_bytes)};
  if (e.acceptance.diagnose) acceptance.push_back("diagnose");  // unchanged fingerprint without
  t.add("acceptance", acceptance);
  t.add("restarts", e.restarts);
  t.add("ttl_seconds", e.ttl_seconds.value_or(-1));
  t.add("resources", {e.resources.cpu.text, e.resources.memory.text, e.resources.shm.text});
  add_storage(t, "storage", e.storage);
  t.add("protect", e.protect ? 1 : 0);
  for (const auto& [key, value] : e.labels) t.add("label", {key, value});
  t.add("ports", {std::to_string(e.master_port), std::to_string(e.rdzv_port)});
  t.add("kueue", {e.queue, e.priority});
  return t.text();
}

}  // namespace

std::string env_inputs_sha256(const ir::Env& env, ir::Platform platform,
                              const std::vector<PlannedObject>& objects,
                              const std::vector<PlannedFile>& files) {
  EnvText rendered;  // what the render made of it: no field the IR text misses goes unseen
  for (const PlannedObject& o : objects) rendered.add("object", {o.file, o.sha256});
  for (const PlannedFile& f : files) rendered.add("file", {f.path, f.sha256});
  return sha256_hex(std::string(kCompilerVersion) + "\n" + ir::platform_name(platform) + "\n" +
                    env_text(env) + rendered.text());
}

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
    if (!f->commit.empty()) item.set("commit", f->commit);  // a git import's resolved commit
  }
  return out;
}

File program_inputs_file(const PlanContext& context) {
  Value doc = Value::map();
  doc.set("format_version", 1);
  doc.set("compiler_version", kCompilerVersion);
  doc.set("source", context.source);
  doc.set("inputs", context.inputs);
  return {"_inputs/" + escape_file_name(context.source) + ".json", to_json_file(doc)};
}

void add_job_token_secret(PlanActions& steps, const EnvLayout& layout) {
  Value& secret = steps.secrets.push(Value::map());
  secret.set("name", layout.job_token_secret);
  secret.set("key", "token");
  secret.set("random_bytes", 32);
  secret.set("encoding", "hex");
}

std::string plan_json(const EnvLayout& layout, const PlanContext& context,
                      const std::vector<PlannedObject>& objects,
                      const std::vector<PlannedFile>& files, const PlanActions& steps) {
  const ir::Env& env = *layout.env;
  Value doc = Value::map();
  doc.set("format_version", 1);
  doc.set("compiler_version", kCompilerVersion);
  doc.set("platform", ir::platform_name(context.platform));
  doc.set("source", context.source);
  doc.set("cluster", layout.cluster);
  // The host apply compares with its client's current server before it changes anything.
  doc.set("api", env.cluster.api);
  doc.set("env", env.name);
  doc.set("namespace", layout.namespace_name);
  doc.set("transport", env.transport == ir::Transport::rdma ? "rdma" : "tcp");
  doc.set("transport_note", env.transport_note);
  doc.set("env_kind", env.kind == ir::EnvKind::dev   ? "dev"
                      : env.kind == ir::EnvKind::run ? "run"
                                                     : "acceptance");
  // What the day-2 commands need (compiler/day2/): the ranks, whether every pod mounts the
  // same /workspace, and the ports `mlenvc port-forward` reaches in rank 0's pod.
  doc.set("nodes", env.nodes);
  doc.set("storage", env.storage.mode == ir::StorageMode::rwx ? "rwx" : "per_pod");
  Value& ports = doc.set("ports", Value::map());
  if (env.debug) ports.set("debugpy", kDebugpyPort);
  for (const ExposedService& service : layout.services) ports.set(service.name, service.app_port);
  doc.set("inputs_sha256", env_inputs_sha256(env, context.platform, objects, files));
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

}  // namespace mlenv::target
