// Lowering an env's checked, merged value to ir::Env: every reference resolved, every default
// filled, and the decisions the rules allowed made once (transport, env kind, launcher).

#include <algorithm>

#include "compiler/base/quantity.h"
#include "compiler/check/checker.h"
#include "compiler/check/launcher.h"
#include "compiler/check/rules_acceptance.h"
#include "compiler/check/value_paths.h"

namespace mlenv::check {

// Where `field` of `env` was assigned, or `fallback` where it is the schema's default.
SourceRange assigned_or(const Value& env, const char* field, SourceRange fallback) {
  const Slot* slot = env.slot(field);
  return slot && slot->assigned.valid() ? slot->assigned : fallback;
}

namespace {

void lower_storage(const Value* s, ir::Storage& into) {
  if (!s) return;
  if (const Value* mode = s->get("mode")) {
    into.mode = mode->text == "rwx" ? ir::StorageMode::rwx : ir::StorageMode::per_pod;
  }
  if (const Value* cls = s->get("class")) into.class_name = cls->text;
  if (const Value* w = s->get("workspace")) into.workspace.text = w->text;
  if (const Value* d = s->get("datasets")) into.datasets.text = d->text;
  if (const Value* c = s->get("workspace_claim")) into.workspace_claim = c->text;
  if (const Value* c = s->get("datasets_claim")) into.datasets_claim = c->text;
}

ir::Rail lower_rail(const Value& rail) {
  ir::Rail out;
  out.device = text_at(&rail, {"device"});
  out.interface = text_at(&rail, {"interface"});
  out.link_layer = text_at(&rail, {"link_layer"}) == "infiniband" ? ir::LinkLayer::infiniband
                                                                  : ir::LinkLayer::ethernet;
  out.network = text_at(&rail, {"network"});
  out.resource = text_at(&rail, {"resource"});
  out.attachment = text_at(&rail, {"attachment"}) == "existing" ? ir::Attachment::existing
                                                                : ir::Attachment::sriov;
  if (const Value* ipam = rail.get("ipam")) {
    out.ipam =
        ir::Ipam{text_at(ipam, {"type"}), text_at(ipam, {"range"}), strings_at(ipam, {"exclude"})};
  }
  return out;
}

std::optional<ir::Rdma> lower_rdma(const Value* rdma) {
  if (!rdma) return std::nullopt;
  ir::Rdma r;
  if (const Value* rails = rdma->get("rails")) {
    for (const auto& rail : rails->items) r.rails.push_back(lower_rail(*rail));
  }
  if (const Value* gid = rdma->get("gid_index")) r.gid_index = static_cast<int>(gid->number);
  if (const Value* gdr = rdma->get("gdr_level")) r.gdr_level = gdr->text;
  return r;
}

ir::Cluster lower_cluster(const Value& cluster, const std::string& env_name) {
  ir::Cluster c;
  c.name = cluster.decl.empty() ? env_name + "-cluster" : cluster.decl;
  const std::string platform = text_at(&cluster, {"platform"});
  c.platform = ir::parse_platform(platform).value_or(ir::Platform::openshift);
  c.api = text_at(&cluster, {"api"});
  c.namespace_name = text_at(&cluster, {"namespace"});
  c.nodes = strings_at(&cluster, {"nodes"});
  c.gpus.per_node = static_cast<int>(int_at(&cluster, {"gpus", "per_node"}, 0));
  c.gpus.resource = text_at(&cluster, {"gpus", "resource"});
  c.gpus.product = text_at(&cluster, {"gpus", "product"});
  lower_storage(cluster.get("storage"), c.storage);
  if (const Value* classes = cluster.get("classes")) {
    for (const Slot& s : classes->slots) {
      c.classes[s.name] = s.value->text == "rwx" ? ir::StorageAccess::rwx : ir::StorageAccess::rwo;
    }
  }
  c.network.rdma = lower_rdma(get_path(&cluster, {"network", "rdma"}));
  c.network.tcp_interfaces = strings_at(&cluster, {"network", "tcp", "interfaces"});
  c.security.service_account = text_at(&cluster, {"security", "service_account"});
  c.security.scc = text_at(&cluster, {"security", "scc"});
  c.security.unlimited_memlock = int_at(&cluster, {"security", "unlimited_memlock"}, 0) != 0;
  c.topology = text_at(&cluster, {"topology"});
  c.require_queue = int_at(&cluster, {"require_queue"}, 0) != 0;
  c.slurm = {text_at(&cluster, {"partition"}),     text_at(&cluster, {"account"}),
             text_at(&cluster, {"qos"}),           text_at(&cluster, {"time"}),
             text_at(&cluster, {"workspace_dir"}), text_at(&cluster, {"datasets_dir"})};
  c.runtime = text_at(&cluster, {"runtime"});
  c.range = cluster.decl_range.valid() ? cluster.decl_range : cluster.range;
  return c;
}

ir::Image lower_image(const Value& image, const std::string& env_name) {
  ir::Image i;
  i.name = image.decl.empty() ? env_name : image.decl;
  i.from = text_at(&image, {"from"});
  i.tag = text_at(&image, {"tag"});
  i.registry = text_at(&image, {"registry"});
  i.pull_secret = text_at(&image, {"pull_secret"});
  i.apt = strings_at(&image, {"apt"});
  i.pip = strings_at(&image, {"pip"});
  i.tools = strings_at(&image, {"tools"});
  if (const Value* vars = image.get("env")) {
    for (const Slot& s : vars->slots) i.env.emplace_back(s.name, s.value->text);
  }
  i.run = strings_at(&image, {"run"});
  i.range = image.decl_range.valid() ? image.decl_range : image.range;
  i.from_range = range_at(image, {"from"});
  return i;
}

// `rdma` is RDMA or failure; `auto` is RDMA where the cluster has rails, with mlenv-boot free to
// fall back to TCP when a node cannot use them (and the plan saying so either way).
void lower_transport(const Value& env, ir::Env& out) {
  const ir::Cluster& c = out.cluster;
  std::string transport = text_at(&env, {"network"});
  bool has_rdma = c.network.rdma && !c.network.rdma->rails.empty();
  if (transport == "rdma" || (transport == "auto" && has_rdma)) {
    out.transport = ir::Transport::rdma;
    out.transport_auto = transport == "auto";
    if (out.transport_auto) {
      out.transport_note = "network = auto: RDMA over the rails of cluster `" + c.name +
                           "`; mlenv-boot falls back to TCP, and logs why, when a node cannot "
                           "use them";
    }
  } else {
    out.transport = ir::Transport::tcp;
    if (transport == "auto") {
      out.transport_note = "network = auto: cluster `" + c.name + "` has no RDMA rails, using TCP";
    }
  }
}

void lower_run(const Value& env, ir::Env& out) {
  out.command = strings_at(&env, {"command"});
  Launcher launcher = classify_launcher(out.command);
  out.launcher = launcher.kind;
  out.launcher_words = launcher.prefix;
  if (const Value* acceptance = env.get("acceptance")) {
    out.kind = ir::EnvKind::acceptance;
    out.acceptance.min_busbw_gbps = static_cast<int>(int_at(acceptance, {"min_busbw_gbps"}, 0));
    out.acceptance.max_bytes = quantity_integer(text_at(acceptance, {"max_bytes"})).value_or(0);
    out.acceptance.diagnose = int_at(acceptance, {"diagnose"}, 0) != 0;
  } else {
    out.kind = out.command.empty() ? ir::EnvKind::dev : ir::EnvKind::run;
  }
  out.restarts = static_cast<int>(int_at(&env, {"restarts"}, 0));
  if (const Value* ttl = env.get("ttl")) out.ttl_seconds = (ttl->number + 999) / 1000;
}

}  // namespace

ir::Env Checker::lower(const Value& env, const DeclState& state) {
  ir::Env out;
  out.name = state.decl->name.name;
  out.range = state.module->at(state.decl->name);
  out.cluster = lower_cluster(*env.get("cluster"), out.name);
  // Only Slurm runs an env without an image (E0419 elsewhere): on the host.
  if (const Value* image = env.get("image")) {
    out.image = lower_image(*image, out.name);
  } else {
    out.on_host = true;
  }

  out.nodes = static_cast<int>(int_at(&env, {"nodes"}, 1));
  out.gpus = static_cast<int>(int_at(&env, {"gpus"}, out.cluster.gpus.per_node));
  out.nproc_per_node = static_cast<int>(int_at(&env, {"nproc_per_node"}, std::max(out.gpus, 1)));
  lower_transport(env, out);
  for (const std::string& s : strings_at(&env, {"services"})) {
    out.services.push_back(s == "vscode"    ? ir::Service::vscode
                           : s == "jupyter" ? ir::Service::jupyter
                                            : ir::Service::tensorboard);
  }
  out.services_range = range_at(env, {"services"});
  out.auth = text_at(&env, {"auth"}) == "none" ? ir::Auth::none : ir::Auth::oauth_proxy;
  out.debug = int_at(&env, {"debug"}, 0) != 0;
  lower_run(env, out);
  out.resources.cpu.text = text_at(&env, {"resources", "cpu"});
  out.resources.memory.text = text_at(&env, {"resources", "memory"});
  out.resources.shm.text = text_at(&env, {"resources", "shm"});
  if (!out.resources.cpu.text.empty()) {
    out.resources.whole_cpus = quantity_integer(out.resources.cpu.text).value_or(0);
  }
  if (!out.resources.memory.text.empty()) {
    const std::int64_t bytes = quantity_integer(out.resources.memory.text).value_or(0);
    out.resources.memory_mib = bytes / 1048576 + (bytes % 1048576 != 0);
  }
  out.storage = out.cluster.storage;
  lower_storage(env.get("storage"), out.storage);
  out.storage.own = env.get("storage") != nullptr;
  out.protect = int_at(&env, {"protect"}, 1) != 0;
  if (const Value* labels = env.get("labels")) {
    for (const Slot& s : labels->slots) out.labels[s.name] = s.value->text;
  }
  out.master_port = static_cast<int>(int_at(&env, {"master_port"}, 29500));
  out.rdzv_port = static_cast<int>(int_at(&env, {"rdzv_port"}, 29400));
  out.master_port_range = assigned_or(env, "master_port", out.range);
  out.rdzv_port_range = assigned_or(env, "rdzv_port", out.range);
  out.queue = text_at(&env, {"queue"});
  out.priority = text_at(&env, {"priority"});
  return out;
}

namespace {

// Adds to `alive` every node under `value` that `checked` names. A declaration's value (a
// cluster, an image) belongs to its declaration, which outlives the env: not descended into.
void keep_checked(const Value& value, const CheckedValues& checked, std::vector<ValuePtr>& alive) {
  auto visit = [&](const ValuePtr& child) {
    if (!child) return;
    if (checked.count(child.get()) != 0) alive.push_back(child);
    if (child->decl.empty()) keep_checked(*child, checked, alive);
  };
  for (const Slot& slot : value.slots) visit(slot.value);
  for (const ValuePtr& item : value.items) visit(item);
}

}  // namespace

void Checker::release(DeclState& env) {
  if (checked_values_.count(env.value.get()) != 0) checked_alive_.push_back(env.value);
  keep_checked(*env.value, checked_values_, checked_alive_);
  env.value.reset();
}

}  // namespace mlenv::check
