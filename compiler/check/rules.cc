// The rules of the language that need only an env's merged value: each names the failure on a
// real cluster it prevents, and reports with a stable code (compiler/diag/codes_front.def). A
// platform's own rules are its provider's, asked through platform_rules.h.

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>

#include "compiler/check/checker.h"
#include "compiler/check/launcher.h"
#include "compiler/check/platform_rules.h"
#include "compiler/check/rules_acceptance.h"
#include "compiler/check/rules_hygiene.h"
#include "compiler/check/rules_usage.h"
#include "compiler/check/value_paths.h"
#include "compiler/ir/program.h"

namespace mlenv::check {

ir::Platform platform_of(const Value* cluster) {
  return ir::parse_platform(text_at(cluster, {"platform"})).value_or(ir::Platform::openshift);
}

namespace {

// An SR-IOV rail's addressing: it needs the attachment mlenvc emits, and whereabouts hands out
// addresses from a range that dhcp must not be given.
void check_ipam(const Value& rail, Diagnostics& diagnostics) {
  const Value* ipam = rail.get("ipam");
  if (!ipam) return;
  const std::string type = text_at(ipam, {"type"});
  if (!rail.get("network")) {
    diagnostics.report(Code::E0408, ipam->range, "`ipam` on a rail without a `network`",
                       "only an SR-IOV attachment (`network`) carries addresses");
  } else if (text_at(&rail, {"attachment"}) == "existing") {
    diagnostics.report(Code::E0408, ipam->range, "`ipam` on an existing attachment",
                       "its addresses are the existing NetworkAttachmentDefinition's: remove "
                       "`ipam`, or let mlenvc emit the attachment (`attachment = sriov`)");
  } else if (type == "whereabouts" && !ipam->get("range")) {
    diagnostics.report(Code::E0408, ipam->range, "whereabouts needs the `range` to hand out",
                       "add `range = \"192.168.5.0/24\"` (the rail's subnet)");
  } else if (type == "dhcp" && (ipam->get("range") || !strings_at(ipam, {"exclude"}).empty())) {
    diagnostics.report(Code::E0408, range_at(*ipam, {ipam->get("range") ? "range" : "exclude"}),
                       "dhcp takes its addresses from the network's DHCP server",
                       "remove `range` and `exclude`, or use `type = whereabouts`");
  }
}

// mlenvc emits one NetworkAttachmentDefinition per SR-IOV rail, named by its `network`: two
// such rails on one name would emit two different objects of that name.
void check_rail_network(const Value& rail, std::map<std::string, SourceRange>& networks,
                        Diagnostics& diagnostics) {
  const Value* network = rail.get("network");
  if (!network || text_at(&rail, {"attachment"}) == "existing") return;
  auto [first, fresh] = networks.emplace(network->text, network->range);
  if (fresh) return;
  Diagnostic& d = diagnostics.report(
      Code::E0412, network->range,
      "two rails on the attachment `" + network->text + "` that mlenvc emits",
      "each SR-IOV rail needs a NetworkAttachmentDefinition of its own: name another "
      "`network`, or `attachment = existing` for one that carries several");
  d.notes.push_back({"the other rail on it", first->second});
}

void check_rail_names(const Value& rails, Diagnostics& diagnostics) {
  std::map<std::string, SourceRange> devices, interfaces, networks;
  for (const auto& rail : rails.items) {
    check_rail_network(*rail, networks, diagnostics);
    const Value* device = rail->get("device");
    const Value* interface = rail->get("interface");
    if (device && !devices.emplace(device->text, device->range).second) {
      Diagnostic& d = diagnostics.report(Code::E0401, device->range,
                                         "RDMA device `" + device->text + "` is listed twice");
      d.notes.push_back({"first listed here", devices[device->text]});
    }
    if (interface && !interfaces.emplace(interface->text, interface->range).second) {
      Diagnostic& d = diagnostics.report(Code::E0407, interface->range,
                                         "interface `" + interface->text + "` carries two rails");
      d.notes.push_back({"first used here", interfaces[interface->text]});
    }
    check_ipam(*rail, diagnostics);
  }
}

// An unprivileged pod has a rail's /dev/infiniband/uverbs* and its interface only through an
// attachment and its device-plugin resource; a RoCE VF without an address has no RoCE v2 GID.
// Reported once per rail however many envs use it: the rail is the cause.
void check_rail_attachments(const PlatformEnv& v, std::set<std::uint64_t>& reported,
                            Diagnostics& diagnostics) {
  const Value* rails = v.rdma->get("rails");
  for (const auto& rail : rails ? rails->items : ValueList{}) {
    if (!reported.insert(rail->range.file * 1000003ull + rail->range.begin).second) continue;
    const bool attached = rail->get("network") && rail->get("resource");
    if (!attached) {
      std::string missing = rail->get("network") ? "`resource`" : "`network`";
      if (!rail->get("network") && !rail->get("resource")) missing = "`network` and `resource`";
      Diagnostic& d = diagnostics.report(
          Code::E0402, rail->range,
          "this rail gives the pod no RDMA device: it names no " + missing,
          "an unprivileged pod gets /dev/infiniband and `" + text_at(rail.get(), {"interface"}) +
              "` only through an attachment and its device-plugin resource");
      d.notes.push_back({"env `" + v.name + "` uses RDMA over it", range_at(v.env, {"network"})});
      continue;
    }
    if (text_at(rail.get(), {"link_layer"}) == "ethernet" &&
        text_at(rail.get(), {"attachment"}) != "existing" && !rail->get("ipam")) {
      diagnostics.report(Code::E0409, rail->range,
                         "RoCE rail `" + text_at(rail.get(), {"network"}) +
                             "` gives its interface "
                             "no IP address",
                         "add `ipam = { type = whereabouts, range = \"<the rail's subnet>\" }`: "
                         "without an IPv4 address the VF has no RoCE v2 GID");
    }
  }
}

// The smallest range that holds `pods` addresses whereabouts hands out: "a /29 gives 6".
std::string smallest_range(std::int64_t pods, bool v6) {
  unsigned host_bits = 2;
  while (host_bits < 40 && (std::int64_t{1} << host_bits) - 2 < pods) ++host_bits;
  return "a /" + std::to_string((v6 ? 128u : 32u) - host_bits) + " gives " +
         std::to_string((std::int64_t{1} << host_bits) - 2);
}

// whereabouts gives each pod of a rail one address of the rail's range: a pod past the last
// one never starts ("Could not allocate IP in range"). The range and the pods are both known.
void check_rail_addresses(const PlatformEnv& v, Diagnostics& diagnostics) {
  const Value* rails = v.rdma->get("rails");
  const std::int64_t pods = int_at(&v.env, {"nodes"}, 1);
  for (const auto& rail : rails ? rails->items : ValueList{}) {
    const Value* ipam = rail->get("ipam");
    if (text_at(ipam, {"type"}) != "whereabouts") continue;
    std::optional<std::uint64_t> addresses = whereabouts_addresses(ipam);
    if (!addresses || *addresses >= static_cast<std::uint64_t>(pods)) continue;
    const Value& range = *ipam->get("range");
    Diagnostic& d = diagnostics.report(
        Code::E0433, range.range,
        "range `" + range.text + "` gives " + std::to_string(*addresses) + " address" +
            (*addresses == 1 ? "" : "es") + " to the " + std::to_string(pods) + " pods of env `" +
            v.name + "`",
        "whereabouts never hands out a range's network and broadcast addresses: " +
            smallest_range(pods, range.text.find(':') != std::string::npos));
    if (const Value* nodes = v.env.get("nodes")) d.notes.push_back({"the pods", nodes->range});
  }
}

void check_transport(const PlatformEnv& v, Diagnostics& diagnostics) {
  if (text_at(&v.env, {"network"}) == "rdma" && !v.rdma) {
    Diagnostic& d = diagnostics.report(
        Code::E0403, range_at(v.env, {"network"}),
        "env `" + v.name + "` asks for RDMA, but cluster `" + v.cluster.decl + "` has no rails",
        "use `network = auto` to fall back to TCP");
    d.notes.push_back({"cluster declared here", v.cluster.decl_range});
  }
}

void check_placement(const PlatformEnv& v, Diagnostics& diagnostics) {
  std::vector<std::string> pinned = strings_at(&v.cluster, {"nodes"});
  std::int64_t nodes = int_at(&v.env, {"nodes"}, 1);
  if (!pinned.empty() && nodes > static_cast<std::int64_t>(pinned.size())) {
    Diagnostic& d = diagnostics.report(Code::E0404, range_at(v.env, {"nodes"}),
                                       "env `" + v.name + "` wants " + std::to_string(nodes) +
                                           " pods, but cluster `" + v.cluster.decl + "` pins " +
                                           std::to_string(pinned.size()) + " nodes",
                                       "one pod per node: the rest would stay Pending");
    d.notes.push_back({"the pinned nodes", range_at(v.cluster, {"nodes"})});
  }
  std::int64_t per_node = int_at(&v.cluster, {"gpus", "per_node"}, 0);
  if (const Value* gpus = v.env.get("gpus"); gpus && gpus->number > per_node) {
    Diagnostic& d =
        diagnostics.report(Code::E0405, gpus->range,
                           "env `" + v.name + "` wants " + std::to_string(gpus->number) +
                               " GPUs per pod, but nodes of `" + v.cluster.decl + "` have " +
                               std::to_string(per_node));
    d.notes.push_back({"gpus.per_node of the cluster", range_at(v.cluster, {"gpus", "per_node"})});
  }
}

// The storage an env really gets: its override, else the cluster's.
const Value* storage_field(const PlatformEnv& v, const char* field) {
  const Value* own = get_path(&v.env, {"storage", field});
  return own ? own : get_path(&v.cluster, {"storage", field});
}

// The cluster's classes `mode` can use: every class, or for `rwx` only the rwx ones (an RWO
// class would leave the claim Pending).
std::vector<std::string> usable_classes(const Value& classes, const Value* mode) {
  std::vector<std::string> names;
  for (const Slot& s : classes.slots) {
    if (!mode || mode->text != "rwx" || s.value->text == "rwx") names.push_back(s.name);
  }
  return names;
}

void check_storage_class(const PlatformEnv& v, Diagnostics& diagnostics) {
  const Value* classes = v.cluster.get("classes");
  const Value* class_value = storage_field(v, "class");
  if (!classes || classes->slots.empty() || !class_value) return;
  const Value* mode = storage_field(v, "mode");
  const Slot* offered = classes->slot(class_value->text);
  std::vector<std::string> usable = usable_classes(*classes, mode);
  if (!offered) {
    std::string hint = closest_name(class_value->text, usable);
    Diagnostic& d = diagnostics.report(
        Code::E0406, class_value->range,
        "storage class `" + class_value->text + "` is not among the cluster's classes",
        hint.empty() ? "" : "did you mean `" + hint + "`?");
    d.notes.push_back({"the cluster's classes", classes->range});
  } else if (mode && mode->text == "rwx" && offered->value->text != "rwx") {
    std::string help = "the claim would stay Pending; ";
    if (usable.empty()) help += "the cluster offers no rwx class";
    for (std::size_t i = 0; i < usable.size(); ++i) {
      help += (i == 0 ? "rwx classes: `" : ", `") + usable[i] + "`";
    }
    Diagnostic& d = diagnostics.report(Code::E0406, class_value->range,
                                       "`rwx` storage needs an rwx class, and `" +
                                           class_value->text + "` is " + offered->value->text,
                                       help);
    d.notes.push_back({"the cluster's classes", classes->range});
  }
}

// A run is an Indexed Job, which has no volumeClaimTemplates: its pods cannot each own a
// claim. An existing claim mounted by pods on several nodes must be ReadWriteMany.
void check_run_storage(const PlatformEnv& v, bool run, Diagnostics& diagnostics) {
  const Value* mode = storage_field(v, "mode");
  if (!mode || mode->text != "per_pod") return;
  std::int64_t nodes = int_at(&v.env, {"nodes"}, 1);
  for (const char* volume : {"workspace", "datasets"}) {
    std::string claim_field = std::string(volume) + "_claim";
    const Value* claim = storage_field(v, claim_field.c_str());
    if (claim && nodes > 1) {
      diagnostics.report(Code::E0415, claim->range,
                         "existing claim `" + claim->text + "` would be mounted by " +
                             std::to_string(nodes) + " pods on " + std::to_string(nodes) +
                             " nodes in `per_pod` mode",
                         "use `mode = rwx` with a ReadWriteMany claim, or `nodes = 1`");
    } else if (!claim && run) {
      Diagnostic& d = diagnostics.report(
          Code::E0417, range_at(v.env, {"command"}),
          "run `" + v.name + "` cannot give each pod its own " + volume + " claim",
          "a run is an Indexed Job, which has no volumeClaimTemplates: use `rwx` storage or an "
          "existing claim (`" +
              claim_field + "`)");
      d.notes.push_back({"`per_pod` storage chosen here", mode->range});
      return;
    }
  }
}

// Where the user chose the value at `path` below `root`: the assignment (`storage = nfs.rwx`)
// when the value is a declaration read through a reference, which was written elsewhere (in a
// stdlib profile); else the value itself.
SourceRange chosen_at(const Value* root, std::initializer_list<const char*> path,
                      const Value& value) {
  const Slot* slot = nullptr;
  for (const char* step : path) {
    slot = root && root->kind == Value::Kind::Block ? root->slot(step) : nullptr;
    if (!slot) return value.range;
    root = slot->value.get();
  }
  return slot->assigned.valid() && !value.decl.empty() ? slot->assigned : value.range;
}

std::string dotted(std::initializer_list<const char*> path) {
  std::string out;
  for (const char* step : path) out += (out.empty() ? "" : ".") + std::string(step);
  return out;
}

}  // namespace

Checker::PlatformFieldTable::PlatformFieldTable(const PlatformRulesList& platforms) {
  for (const PlatformRules* rules : platforms) {
    for (const PlatformField& field : rules->fields()) {
      auto same = [&](const Entry& e) {
        return e.field.on_env == field.on_env && dotted(e.field.path) == dotted(field.path);
      };
      auto it = std::find_if(entries.begin(), entries.end(), same);
      if (it == entries.end()) it = entries.insert(entries.end(), {field, {}});
      it->platforms.insert(rules->platform());
    }
  }
  // The cluster's fields first, each side in the order the platforms list them.
  std::stable_partition(entries.begin(), entries.end(),
                        [](const Entry& e) { return !e.field.on_env; });
}

namespace {

// Fields the cluster's platform does not have (E0418), then its own rules.
void check_platform(const PlatformEnv& v, const Checker::PlatformFieldTable& table,
                    const PlatformRules& rules, PlatformReport& report) {
  for (const auto& [f, platforms] : table.entries) {
    const Value* value = get_path(f.on_env ? &v.env : &v.cluster, f.path);
    if (!value || platforms.count(rules.platform())) continue;
    SourceRange at = chosen_at(f.on_env ? &v.env : &v.cluster, f.path, *value);
    report.not_applicable((f.on_env ? "" : "cluster.") + dotted(f.path), at,
                          at != value->range ? value : nullptr);
  }
  rules.check(v, report);
}

void check_command(const PlatformEnv& v, Diagnostics& diagnostics) {
  const Value* command = v.env.get("command");
  if (const Value* acceptance = v.env.get("acceptance");
      acceptance && command && !command->items.empty()) {
    Diagnostic& d = diagnostics.report(
        Code::E0416, command->range, "acceptance run `" + v.name + "` has a command of its own",
        "an acceptance run is `mlenv-boot --nccl-check`: remove `command`, or `acceptance`");
    d.notes.push_back({"acceptance declared here", acceptance->range});
    return;
  }
  if (!command) return;
  std::vector<std::string> words = strings_at(&v.env, {"command"});
  Launcher launcher = classify_launcher(words);
  for (const LauncherConflict& c : launcher_conflicts(words, launcher)) {
    SourceRange at =
        c.index < command->items.size() ? command->items[c.index]->range : command->range;
    Diagnostic& d =
        c.needs_ssh ? diagnostics.report(Code::E0414, at,
                                         "`" + c.option +
                                             "` asks DeepSpeed for a multi-host launch over "
                                             "ssh, which the pods do not run",
                                         "mlenv-boot starts DeepSpeed once per node without ssh")
                    : diagnostics.report(Code::E0410, at,
                                         "`" + c.option + "` is set by mlenv-boot on every node",
                                         "remove it: mlenv-boot starts " + launcher.kind +
                                             " once per node with the node-level arguments");
    d.notes.push_back({"mlenv-boot runs: " + launcher_example(words, launcher), {}});
  }
}

}  // namespace

const PlatformRules* Checker::platform_rules(ir::Platform platform) const {
  for (const PlatformRules* rules : platforms_) {
    if (rules->platform() == platform) return rules;
  }
  return nullptr;
}

void Checker::check_rules(const Value& env, const DeclState& state) {
  // An env whose cluster failed to evaluate has no cluster block: what it lacks is reported.
  const Value* cluster = env.get("cluster");
  if (!cluster) return;
  check_hygiene(env, checked_values_, diagnostics_);
  const Value* rdma = get_path(cluster, {"network", "rdma"});
  const std::string& name = state.decl->name.name;
  const std::string transport = text_at(&env, {"network"});
  const PlatformEnv view{env,
                         *cluster,
                         rdma,
                         name,
                         transport == "rdma" || (transport == "auto" && rdma != nullptr),
                         checked_values_};
  // An acceptance run mounts no storage: it reports through its log (and a results file in
  // the container), so it runs on any cluster.
  const bool run = !strings_at(&env, {"command"}).empty() && !env.get("acceptance");
  const ir::Platform platform = platform_of(cluster);
  const PlatformRules* rules = platform_rules(platform);

  // A cluster's rails are shared by every env on it (copy on write): checked once.
  if (const Value* rails = rdma ? rdma->get("rails") : nullptr;
      rails && checked_values_.insert(rails).second) {
    check_rail_names(*rails, diagnostics_);
  }
  if (rules) {
    PlatformReport report(view, platform, reported_platform_, diagnostics_);
    check_platform(view, platform_fields_, *rules, report);
  }
  // A batch job or a local process runs on the hosts: its rails need no attachment (E0402).
  const bool in_pods = !rules || !rules->on_hosts();
  if (view.uses_rdma && rdma && in_pods) {
    check_rail_attachments(view, reported_rails_, diagnostics_);
    check_rail_addresses(view, diagnostics_);
  }
  check_transport(view, diagnostics_);
  check_placement(view, diagnostics_);
  check_storage_class(view, diagnostics_);
  if (!env.get("acceptance")) check_run_storage(view, run, diagnostics_);
  check_command(view, diagnostics_);
  check_acceptance_memory(env, cluster, diagnostics_);
  check_usage(env, UsageContext{name, state.module->at(state.decl->name), in_pods}, checked_values_,
              diagnostics_);
}

}  // namespace mlenv::check
