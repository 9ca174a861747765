// What happens to each env: defaults and required fields on its merged value, the rules of
// the language that need only the typed program, and lowering to ir::Env.

#include <algorithm>
#include <set>

#include "compiler/check/checker.h"
#include "compiler/check/rules_hygiene.h"

namespace mlenv::check {
namespace {

const Value* get_path(const Value* value, std::initializer_list<const char*> path) {
  for (const char* name : path) {
    if (!value || value->kind != Value::Kind::Block) return nullptr;
    value = value->get(name);
  }
  return value;
}

std::string text_at(const Value* root, std::initializer_list<const char*> path) {
  const Value* v = get_path(root, path);
  return v ? v->text : std::string();
}

std::int64_t int_at(const Value* root, std::initializer_list<const char*> path,
                    std::int64_t fallback) {
  const Value* v = get_path(root, path);
  return v ? v->number : fallback;
}

std::vector<std::string> strings_at(const Value* root, std::initializer_list<const char*> path) {
  std::vector<std::string> out;
  if (const Value* v = get_path(root, path)) {
    for (const auto& item : v->items) out.push_back(item->text);
  }
  return out;
}

SourceRange range_at(const Value& root, std::initializer_list<const char*> path) {
  const Value* v = get_path(&root, path);
  return v ? v->range : root.range;
}

// An SR-IOV rail's addressing: it needs the attachment that carries it, and whereabouts
// hands out addresses from a range that dhcp must not be given.
void check_ipam(const Value& rail, Diagnostics& diagnostics) {
  const Value* ipam = rail.get("ipam");
  if (!ipam) return;
  const std::string type = text_at(ipam, {"type"});
  if (!rail.get("network")) {
    diagnostics.report(Code::E0408, ipam->range, "`ipam` on a rail without a `network`",
                       "only an SR-IOV attachment (`network`) carries addresses");
  } else if (type == "whereabouts" && !ipam->get("range")) {
    diagnostics.report(Code::E0408, ipam->range, "whereabouts needs the `range` to hand out",
                       "add `range = \"192.168.5.0/24\"` (the rail's subnet)");
  } else if (type == "dhcp" && (ipam->get("range") || !strings_at(ipam, {"exclude"}).empty())) {
    diagnostics.report(Code::E0408, range_at(*ipam, {ipam->get("range") ? "range" : "exclude"}),
                       "dhcp takes its addresses from the network's DHCP server",
                       "remove `range` and `exclude`, or use `type = whereabouts`");
  }
}

}  // namespace

void Checker::complete(Value& value, const SchemaDef& schema, const DeclState& env,
                       const std::string& path) {
  for (const FieldDef& field : schema.fields) {
    Slot* slot = value.slot(field.name);
    if (!slot) {
      const auto& failed = value.failed_fields;
      if (std::find(failed.begin(), failed.end(), field.name) != failed.end()) {
        continue;  // its assignment was the error, already reported
      }
      if (ValuePtr fallback = field_default(field)) {
        value.slots.push_back({field.name, fallback, {}, {}});
        slot = &value.slots.back();
      } else if (field.optional) {
        continue;
      } else {
        // A profile missing a field is reported once, however many envs use it.
        SourceRange owner = value.decl_range.valid() ? value.decl_range : value.range;
        if (!reported_missing_.insert({owner.file * 1000003u + owner.begin, path + field.name})
                 .second) {
          continue;
        }
        std::string in = value.decl.empty() ? "" : " of " + schema.name + " `" + value.decl + "`";
        Diagnostic& d = diagnostics_.report(
            Code::E0303, env.module->at(env.decl->name),
            "missing required field `" + path + field.name + "`" + in,
            "env `" + env.decl->name.name + "` needs it");
        if (!field.doc.empty()) d.notes.push_back({"`" + field.name + "`: " + field.doc, {}});
        if (value.decl_range.valid() && value.decl_range != env.module->at(env.decl->name)) {
          d.notes.push_back({"set it in `" + value.decl + "` or where the env extends it",
                             value.decl_range});
        }
        continue;
      }
    }
    Value& child = *slot->value;
    if (field.type.kind == Type::Kind::Schema && child.kind == Value::Kind::Block) {
      std::string prefix = child.decl.empty() ? path + field.name + "." : "";
      complete(child, *field.type.schema, env, prefix);
    } else if (field.type.kind == Type::Kind::List && field.type.element->kind == Type::Kind::Schema) {
      for (std::size_t i = 0; i < child.items.size(); ++i) {
        complete(*child.items[i], *field.type.element->schema, env,
                 path + field.name + "[" + std::to_string(i) + "].");
      }
    }
  }
}

void Checker::check_rules(const Value& env, const DeclState& state) {
  check_hygiene(env, diagnostics_);
  const Value* cluster = env.get("cluster");
  const Value* rdma = get_path(cluster, {"network", "rdma"});
  const std::string env_name = state.decl->name.name;

  if (rdma) {
    std::map<std::string, SourceRange> devices, interfaces;
    std::size_t sriov = 0;
    const Value* rails = rdma->get("rails");
    for (const auto& rail : rails ? rails->items : std::vector<ValuePtr>{}) {
      const Value* device = rail->get("device");
      const Value* interface = rail->get("interface");
      if (device && !devices.emplace(device->text, device->range).second) {
        Diagnostic& d = diagnostics_.report(Code::E0401, device->range,
                                            "RDMA device `" + device->text + "` is listed twice");
        d.notes.push_back({"first listed here", devices[device->text]});
      }
      if (interface && !interfaces.emplace(interface->text, interface->range).second) {
        Diagnostic& d = diagnostics_.report(
            Code::E0407, interface->range,
            "interface `" + interface->text + "` carries two rails");
        d.notes.push_back({"first used here", interfaces[interface->text]});
      }
      sriov += (rail->get("network") != nullptr) + (rail->get("resource") != nullptr);
      check_ipam(*rail, diagnostics_);
    }
    if (sriov != 0 && rails && sriov != 2 * rails->items.size()) {
      for (const auto& rail : rails->items) {
        if (!rail->get("network") || !rail->get("resource")) {
          diagnostics_.report(Code::E0402, rail->range,
                              "this rail lacks a `network` or `resource` that other rails name",
                              "name both, or neither on every rail");
          break;
        }
      }
    }
  }

  std::string transport = text_at(&env, {"network"});
  if (transport == "rdma" && !rdma) {
    Diagnostic& d = diagnostics_.report(
        Code::E0403, range_at(env, {"network"}),
        "env `" + env_name + "` asks for RDMA, but cluster `" + cluster->decl + "` has no rails",
        "use `network = auto` to fall back to TCP");
    d.notes.push_back({"cluster declared here", cluster->decl_range});
  }

  std::vector<std::string> pinned = strings_at(cluster, {"nodes"});
  std::int64_t nodes = int_at(&env, {"nodes"}, 1);
  if (!pinned.empty() && nodes > static_cast<std::int64_t>(pinned.size())) {
    Diagnostic& d = diagnostics_.report(
        Code::E0404, range_at(env, {"nodes"}),
        "env `" + env_name + "` wants " + std::to_string(nodes) + " pods, but cluster `" +
            cluster->decl + "` pins " + std::to_string(pinned.size()) + " nodes",
        "one pod per node: the rest would stay Pending");
    d.notes.push_back({"the pinned nodes", range_at(*cluster, {"nodes"})});
  }

  std::int64_t per_node = int_at(cluster, {"gpus", "per_node"}, 0);
  if (const Value* gpus = env.get("gpus"); gpus && gpus->number > per_node) {
    Diagnostic& d = diagnostics_.report(
        Code::E0405, gpus->range,
        "env `" + env_name + "` wants " + std::to_string(gpus->number) +
            " GPUs per pod, but nodes of `" + cluster->decl + "` have " +
            std::to_string(per_node));
    d.notes.push_back({"gpus.per_node of the cluster", range_at(*cluster, {"gpus", "per_node"})});
  }

  const Value* classes = cluster ? cluster->get("classes") : nullptr;
  if (classes && !classes->slots.empty()) {
    const Value* override_class = get_path(&env, {"storage", "class"});
    const Value* class_value = override_class ? override_class : get_path(cluster, {"storage", "class"});
    std::string mode = text_at(&env, {"storage", "mode"});
    if (mode.empty()) mode = text_at(cluster, {"storage", "mode"});
    if (class_value) {
      const Slot* offered = classes->slot(class_value->text);
      std::vector<std::string> names;
      for (const Slot& s : classes->slots) names.push_back(s.name);
      if (!offered) {
        std::string hint = closest_name(class_value->text, names);
        Diagnostic& d = diagnostics_.report(
            Code::E0406, class_value->range,
            "storage class `" + class_value->text + "` is not among the cluster's classes",
            hint.empty() ? "" : "did you mean `" + hint + "`?");
        d.notes.push_back({"the cluster's classes", classes->range});
      } else if (mode == "rwx" && offered->value->text != "rwx") {
        Diagnostic& d = diagnostics_.report(
            Code::E0406, class_value->range,
            "`rwx` storage needs an rwx class, and `" + class_value->text + "` is " +
                offered->value->text,
            "the claim would stay Pending");
        d.notes.push_back({"the cluster's classes", classes->range});
      }
    }
  }

  if (const Value* scc = get_path(cluster, {"security", "scc"}); scc && scc->text == "privileged") {
    diagnostics_.report(Code::E0501, scc->range, "the `privileged` SCC is never granted",
                        "unset `scc` to get an IPC_LOCK-only SCC, or name one that allows it");
  }
}

ir::Env Checker::lower(const Value& env, const DeclState& state) {
  ir::Env out;
  const Value* cluster = env.get("cluster");
  const Value* image = env.get("image");
  out.name = state.decl->name.name;
  out.range = state.module->at(state.decl->name);

  ir::Cluster& c = out.cluster;
  c.name = cluster->decl.empty() ? out.name + "-cluster" : cluster->decl;
  c.api = text_at(cluster, {"api"});
  c.namespace_name = text_at(cluster, {"namespace"});
  c.nodes = strings_at(cluster, {"nodes"});
  c.gpus.per_node = static_cast<int>(int_at(cluster, {"gpus", "per_node"}, 0));
  c.gpus.resource = text_at(cluster, {"gpus", "resource"});
  c.gpus.product = text_at(cluster, {"gpus", "product"});
  auto lower_storage = [](const Value* s, ir::Storage& into) {
    if (!s) return;
    if (const Value* mode = s->get("mode")) {
      into.mode = mode->text == "rwx" ? ir::StorageMode::rwx : ir::StorageMode::per_pod;
    }
    if (const Value* cls = s->get("class")) into.class_name = cls->text;
    if (const Value* w = s->get("workspace")) into.workspace.text = w->text;
    if (const Value* d = s->get("datasets")) into.datasets.text = d->text;
  };
  lower_storage(cluster->get("storage"), c.storage);
  if (const Value* classes = cluster->get("classes")) {
    for (const Slot& s : classes->slots) {
      c.classes[s.name] = s.value->text == "rwx" ? ir::StorageAccess::rwx : ir::StorageAccess::rwo;
    }
  }
  if (const Value* rdma = get_path(cluster, {"network", "rdma"})) {
    ir::Rdma r;
    if (const Value* rails = rdma->get("rails")) {
      for (const auto& rail : rails->items) {
        ir::Rail& lowered = r.rails.emplace_back();
        lowered.device = text_at(rail.get(), {"device"});
        lowered.interface = text_at(rail.get(), {"interface"});
        lowered.network = text_at(rail.get(), {"network"});
        lowered.resource = text_at(rail.get(), {"resource"});
        if (const Value* ipam = rail->get("ipam")) {
          lowered.ipam = ir::Ipam{text_at(ipam, {"type"}), text_at(ipam, {"range"}),
                                  strings_at(ipam, {"exclude"})};
        }
      }
    }
    if (const Value* gid = rdma->get("gid_index")) r.gid_index = static_cast<int>(gid->number);
    if (const Value* gdr = rdma->get("gdr_level")) r.gdr_level = gdr->text;
    c.network.rdma = std::move(r);
  }
  c.network.tcp_interfaces = strings_at(cluster, {"network", "tcp", "interfaces"});
  c.security.service_account = text_at(cluster, {"security", "service_account"});
  c.security.scc = text_at(cluster, {"security", "scc"});
  c.range = cluster->decl_range.valid() ? cluster->decl_range : cluster->range;

  ir::Image& i = out.image;
  i.name = image->decl.empty() ? out.name : image->decl;
  i.from = text_at(image, {"from"});
  i.tag = text_at(image, {"tag"});
  i.apt = strings_at(image, {"apt"});
  i.pip = strings_at(image, {"pip"});
  i.tools = strings_at(image, {"tools"});
  if (const Value* vars = image->get("env")) {
    for (const Slot& s : vars->slots) i.env.emplace_back(s.name, s.value->text);
  }
  i.run = strings_at(image, {"run"});
  i.range = image->decl_range.valid() ? image->decl_range : image->range;
  i.from_range = range_at(*image, {"from"});

  out.nodes = static_cast<int>(int_at(&env, {"nodes"}, 1));
  out.gpus = static_cast<int>(int_at(&env, {"gpus"}, c.gpus.per_node));
  out.nproc_per_node =
      static_cast<int>(int_at(&env, {"nproc_per_node"}, std::max(out.gpus, 1)));
  std::string transport = text_at(&env, {"network"});
  bool has_rdma = c.network.rdma && !c.network.rdma->rails.empty();
  if (transport == "rdma" || (transport == "auto" && has_rdma)) {
    out.transport = ir::Transport::rdma;
  } else {
    out.transport = ir::Transport::tcp;
    if (transport == "auto") {
      out.transport_note = "network = auto: cluster `" + c.name + "` has no RDMA rails, using TCP";
    }
  }
  for (const std::string& s : strings_at(&env, {"services"})) {
    out.services.push_back(s == "vscode"    ? ir::Service::vscode
                           : s == "jupyter" ? ir::Service::jupyter
                                            : ir::Service::tensorboard);
  }
  out.services_range = range_at(env, {"services"});
  out.auth = text_at(&env, {"auth"}) == "none" ? ir::Auth::none : ir::Auth::oauth_proxy;
  out.debug = int_at(&env, {"debug"}, 0) != 0;
  out.command = strings_at(&env, {"command"});
  out.resources.cpu.text = text_at(&env, {"resources", "cpu"});
  out.resources.memory.text = text_at(&env, {"resources", "memory"});
  out.resources.shm.text = text_at(&env, {"resources", "shm"});
  out.storage = c.storage;
  lower_storage(env.get("storage"), out.storage);
  out.protect = int_at(&env, {"protect"}, 1) != 0;
  if (const Value* labels = env.get("labels")) {
    for (const Slot& s : labels->slots) out.labels[s.name] = s.value->text;
  }
  out.master_port = static_cast<int>(int_at(&env, {"master_port"}, 29500));
  out.rdzv_port = static_cast<int>(int_at(&env, {"rdzv_port"}, 29400));
  return out;
}

}  // namespace mlenv::check
