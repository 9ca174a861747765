// Rules on what a user most likely did not mean: each value here is well-typed, and each would
// fail on the cluster or do something else than it reads. Called once per env from
// Checker::check_rules.

#include "compiler/check/rules_usage.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "compiler/base/pattern.h"
#include "compiler/base/quantity.h"
#include "compiler/check/checker.h"
#include "compiler/check/launcher.h"
#include "compiler/check/rules_hygiene.h"
#include "compiler/check/types.h"
#include "compiler/check/value_paths.h"

namespace mlenv::check {
namespace {

// What every rule reads of one env.
struct View {
  const Value& env;
  const Value* cluster;
  const UsageContext& context;
  bool in_pods;  ///< the env runs in pods, not on the hosts (PlatformRules::on_hosts)
  CheckedValues& checked;
  Diagnostics& diagnostics;

  /// True the first time `value` is seen: a cluster's or image's value is shared by its envs.
  bool first(const Value* value) const { return value && checked.insert(value).second; }
};

// --- Names -------------------------------------------------------------------------------

// `TrainJob` -> `train-job`, `my_env` -> `my-env`: a DNS label close to what was written.
std::string dns_label_like(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size() && out.size() < 63; ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    bool after_lower = i > 0 && (std::islower(static_cast<unsigned char>(name[i - 1])) ||
                                 std::isdigit(static_cast<unsigned char>(name[i - 1])));
    if (std::isupper(c)) {
      if (after_lower) out += '-';
      out += static_cast<char>(std::tolower(c));
    } else if (std::islower(c) || std::isdigit(c)) {
      out += static_cast<char>(c);
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// Every object of an env in pods is named after it (StatefulSet, Job, Service, PVCs, ...), and
// Kubernetes names are DNS labels: `TrainJob` or `my_env` is refused at apply, object by object.
void check_env_name(const View& v) {
  const std::string& name = v.context.name;
  if (!v.in_pods || is_dns_label(name) || name.size() > 63) return;  // too long: E0411
  std::string like = dns_label_like(name);
  v.diagnostics.report(Code::E0320, v.context.name_range,
                       "env name `" + name + "` cannot name Kubernetes objects",
                       "object names are lower-case letters, digits and `-`" +
                           (like.empty() ? std::string() : ": `" + like + "`?"));
}

// --- Quantities --------------------------------------------------------------------------

// The least memory or volume size that can be meant: below it, a unit is missing (`512`) or
// wrong (`512m`, a thousandth). A container runtime refuses a memory limit under 6 MiB.
constexpr long double kLeastBytes = 0x1p20L;

bool all_digits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// A size in bytes: positive, and not a few bytes.
void check_size(const View& v, const Value* value, const std::string& field) {
  if (!value || value->kind != Value::Kind::Quantity) return;
  std::optional<long double> bytes = parse_quantity(value->text);
  if (!bytes) return;
  const std::string shown = "`" + field + " = " + value->text + "`";
  if (*bytes <= 0) {
    v.diagnostics.report(Code::E0304, value->range, shown + " is not a size",
                         "a size is larger than 0");
    return;
  }
  if (*bytes >= kLeastBytes) return;
  std::string help = "sizes are bytes: `Mi` and `Gi` are mebibytes and gibibytes";
  if (all_digits(value->text)) {
    help = "a number without a unit is bytes: `" + value->text + "Gi` or `" + value->text + "Mi`?";
  } else if (value->text.back() == 'm') {
    help = "`m` is a thousandth; mebibytes are `" + value->text.substr(0, value->text.size() - 1) +
           "Mi`";
  }
  v.diagnostics.report(Code::E0321, value->range, shown + " is less than 1Mi", help);
}

// CPU cores: binary suffixes are memory's, and no node has thousands of cores.
void check_cpu(const View& v, const Value* cpu) {
  if (!cpu || cpu->kind != Value::Kind::Quantity) return;
  std::optional<long double> cores = parse_quantity(cpu->text);
  if (!cores) return;
  if (*cores < 0) {
    v.diagnostics.report(Code::E0304, cpu->range, "`cpu = " + cpu->text + "` is negative");
  } else if (cpu->text.back() == 'i' || *cores > 4096) {
    v.diagnostics.report(Code::E0321, cpu->range,
                         "`cpu = " + cpu->text + "` asks for more cores than any node has",
                         "`cpu` counts cores (`16`, `500m`); sizes belong in `memory`");
  }
}

// mlenv-boot sweeps from 8 bytes up to max_bytes and refuses a boot.json outside 8 B..1 TiB
// (runtime/config.cc), so an acceptance run outside it would fail on every node at start.
void check_max_bytes(const View& v, const Value* max_bytes) {
  if (!max_bytes || !v.first(max_bytes)) return;
  std::optional<long double> bytes = parse_quantity(max_bytes->text);
  if (bytes && (*bytes < 8 || *bytes > 0x1p40L)) {
    v.diagnostics.report(Code::E0304, max_bytes->range,
                         "`max_bytes = " + max_bytes->text + "` is outside 8 to 1Ti",
                         "the sweep runs from 8 bytes up to `max_bytes`");
  }
}

void check_quantities(const View& v) {
  const Value* resources = v.env.get("resources");
  check_size(v, get_path(resources, {"memory"}), "memory");
  check_size(v, get_path(resources, {"shm"}), "shm");
  check_cpu(v, get_path(resources, {"cpu"}));
  for (const char* volume : {"workspace", "datasets"}) {
    check_size(v, get_path(&v.env, {"storage", volume}), std::string("storage.") + volume);
    const Value* shared = get_path(v.cluster, {"storage", volume});
    if (v.first(shared)) check_size(v, shared, std::string("storage.") + volume);
  }
  check_max_bytes(v, get_path(&v.env, {"acceptance", "max_bytes"}));
}

// --- GPUs --------------------------------------------------------------------------------

// A device plugin advertises `<vendor domain>/<resource>` (nvidia.com/gpu, amd.com/gpu); a
// name without a domain is advertised by none, so the pods would stay Pending.
const Pattern& extended_resource() {
  static const Pattern p =
      Pattern::literal(R"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+/)"
                       R"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])");
  return p;
}

void check_gpu_resource(const View& v) {
  const Value* resource = get_path(v.cluster, {"gpus", "resource"});
  if (!v.in_pods || !v.first(resource)) return;
  if (extended_resource().matches(resource->text) && !is_extended_resource_name(resource->text)) {
    v.diagnostics.report(Code::E0322, resource->range,
                         "`" + resource->text + "` is not an extended resource name",
                         "the API server refuses it in a pod's resources: a name of at most 63 "
                         "characters after a domain outside `kubernetes.io`");
    return;
  }
  if (extended_resource().matches(resource->text)) return;
  std::string help = "a device plugin's resource is `<vendor domain>/<name>`";
  help += resource->text.find("nvidia") != std::string::npos ? ": `nvidia.com/gpu`?"
                                                             : " (`nvidia.com/gpu`, `amd.com/gpu`)";
  v.diagnostics.report(Code::E0322, resource->range,
                       "`" + resource->text + "` is not a resource a device plugin advertises",
                       help);
}

// The GPUs of each pod: the env's `gpus`, else all of a node's.
std::int64_t pod_gpus(const View& v) {
  return int_at(&v.env, {"gpus"}, int_at(v.cluster, {"gpus", "per_node"}, 0));
}

SourceRange gpus_at(const View& v) {
  return v.env.get("gpus") ? range_at(v.env, {"gpus"}) : range_at(*v.cluster, {"gpus"});
}

void check_gpus(const View& v) {
  check_gpu_resource(v);
  const bool acceptance = v.env.get("acceptance") != nullptr;
  const std::int64_t gpus = pod_gpus(v);
  if (acceptance && gpus == 0) {
    // On the env's own `gpus = 0` where it has one; else on the env, with the cluster noted.
    Diagnostic& d = v.diagnostics.report(
        Code::E0427, v.env.get("gpus") ? range_at(v.env, {"gpus"}) : v.context.name_range,
        "acceptance run `" + v.context.name + "` has no GPU",
        "the NCCL test runs on every GPU of every pod");
    if (!v.env.get("gpus")) d.notes.push_back({"the pod's GPUs come from here", gpus_at(v)});
  } else if (gpus == 0 && !v.env.get("gpus")) {
    Diagnostic& d = v.diagnostics.report(
        Code::W0403, assigned_at(v.env, "cluster"),
        "env `" + v.context.name + "` gets no GPU: its cluster sets no `gpus.per_node`",
        "set `gpus { per_node = 8 }` on the cluster, or `gpus = 0` on a CPU-only env");
    d.notes.push_back(
        {"the cluster", v.cluster->decl_range.valid() ? v.cluster->decl_range : v.cluster->range});
  }
  const Value* nproc = v.env.get("nproc_per_node");
  if (nproc && gpus > 0 && nproc->number > gpus && !strings_at(&v.env, {"command"}).empty()) {
    Diagnostic& d = v.diagnostics.report(
        Code::E0425, nproc->range,
        "`nproc_per_node = " + std::to_string(nproc->number) + "` starts more workers than the " +
            std::to_string(gpus) + " GPUs of each pod",
        "workers beyond the GPUs share a device, which NCCL refuses");
    d.notes.push_back({"the pod's GPUs come from here", gpus_at(v)});
  }
}

// --- Lists -------------------------------------------------------------------------------

// A service or tool twice would emit two identical sidecars, Services and Routes, or install a
// tool twice; kustomize refuses the duplicate objects.
void check_twice(const View& v, const Value* list, const char* what) {
  std::map<std::string, SourceRange> seen;
  for (const ValuePtr& item : list ? list->items : ValueList{}) {
    auto [it, fresh] = seen.emplace(item->text, item->range);
    if (fresh) continue;
    Diagnostic& d = v.diagnostics.report(
        Code::E0323, item->range, std::string(what) + " `" + item->text + "` is listed twice");
    d.notes.push_back({"first listed here", it->second});
  }
}

// --- Commands ----------------------------------------------------------------------------

// The words of a shell script, split where a command may start (`;`, `&&`, `|`, ...).
std::vector<std::string> script_words(const std::string& script) {
  std::vector<std::string> words(1);
  for (char c : script) {
    if (std::isspace(static_cast<unsigned char>(c)) ||
        std::string_view(";&|()").find(c) != std::string_view::npos) {
      if (!words.back().empty()) words.emplace_back();
    } else {
      words.back() += c;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

bool is_shell(std::string_view word) {
  std::size_t slash = word.rfind('/');
  if (slash != std::string_view::npos) word = word.substr(slash + 1);
  return word == "sh" || word == "bash" || word == "dash" || word == "zsh";
}

// `["python train.py"]` is one program name with a space in it: exec fails in the pod.
void check_command_words(const View& v, const Value& command) {
  const Value& program = *command.items[0];
  if (program.text.find(' ') == std::string::npos) return;
  std::string split;
  for (const std::string& word : script_words(program.text)) {
    split += (split.empty() ? "[\"" : "\", \"") + word;
  }
  split += command.items.size() > 1 ? "\", ...]" : "\"]";
  v.diagnostics.report(Code::E0324, program.range,
                       "the program `" + program.text + "` has a space in its name",
                       "each word is its own string: " + split);
}

// `["bash", "-c", "torchrun ..."]`: mlenv-boot sees the worker program `bash`, starts it once
// per GPU, and the launcher inside gets none of the node arguments.
void check_hidden_launcher(const View& v, const Value& command) {
  std::vector<std::string> words = strings_at(&v.env, {"command"});
  if (!is_shell(words[0])) return;
  for (std::size_t i = 1; i + 1 < words.size(); ++i) {
    const std::string& flag = words[i];
    if (flag.size() < 2 || flag[0] != '-' || flag[1] == '-' || flag.find('c') == std::string::npos)
      continue;
    std::vector<std::string> script = script_words(words[i + 1]);
    std::optional<LauncherMention> launcher = find_launcher_word(script, 0, script.size());
    if (!launcher) return;
    v.diagnostics.report(
        Code::E0426, command.items[i + 1]->range,
        "`" + words[0] + " " + flag + "` hides the launcher `" + launcher->kind +
            "` from mlenv-boot",
        "mlenv-boot starts `" + words[0] +
            "` as a worker once per GPU, and the launcher gets no node arguments: make the "
            "launcher the command (`[\"" +
            launcher->kind + "\", \"train.py\"]`)");
    return;
  }
}

// `["sudo", "torchrun", "train.py"]`: a launcher behind words mlenv-boot does not understand is
// started once per GPU as a worker program, each copy a single-node launcher of its own.
void check_unrecognised_launcher(const View& v, const Value& command) {
  std::vector<std::string> words = strings_at(&v.env, {"command"});
  std::optional<LauncherMention> launcher = unrecognised_launcher(words);
  if (!launcher || launcher->index >= command.items.size()) return;
  v.diagnostics.report(Code::W0409, command.items[launcher->index]->range,
                       "`" + launcher->name + "` looks like the launcher " + launcher->kind +
                           ", but mlenv-boot does not recognise the command as one",
                       "it would start `" + words[0] +
                           "` once per GPU as a worker: start the command with the launcher, "
                           "or with `env`, `uv run`, `conda run` or `pixi run` before it");
}

void check_command(const View& v) {
  const Value* command = v.env.get("command");
  if (!command || command->items.empty()) return;
  check_command_words(v, *command);
  if (is_shell(strings_at(&v.env, {"command"})[0])) {
    check_hidden_launcher(v, *command);
  } else {
    check_unrecognised_launcher(v, *command);
  }
}

// --- What an env's kind ignores ----------------------------------------------------------

void check_run_fields(const View& v) {
  if (!v.in_pods) return;  // a batch job has neither (E0418)
  const bool acceptance = v.env.get("acceptance") != nullptr;
  const bool dev = !acceptance && strings_at(&v.env, {"command"}).empty();
  const Value* restarts = v.env.get("restarts");
  const Value* ttl = v.env.get("ttl");
  if (dev) {
    if (restarts && restarts->number != 0) {
      v.diagnostics.report(Code::W0404, restarts->range,
                           "`restarts` does nothing on dev env `" + v.context.name + "`",
                           "a dev env (no `command`) is a StatefulSet that restarts its pods "
                           "always; `restarts` counts the retries of a run");
    }
    if (ttl) {
      v.diagnostics.report(Code::W0404, ttl->range,
                           "`ttl` does nothing on dev env `" + v.context.name + "`",
                           "a dev env never finishes; `ttl` keeps a finished run's pods");
    }
  } else if (acceptance && ttl && ttl->number < 60000) {
    v.diagnostics.report(
        Code::E0427, ttl->range,
        "acceptance run `" + v.context.name + "` is deleted " + ttl->text + " after it ends",
        "its result is read from rank 0's log: keep the pods a while (`ttl = 1h`)");
  }
}

// --- Networks in pods --------------------------------------------------------------------

// A pod's interfaces are `eth0` (the cluster network) and one per attachment (`net1`, ...):
// Multus cannot add a rail as `eth0`, and a host's interface (`bond0`) is not in the pod.
void check_pod_interfaces(const View& v) {
  if (!v.in_pods) return;
  const Value* rails = get_path(v.cluster, {"network", "rdma", "rails"});
  std::vector<std::string> rail_interfaces;
  for (const ValuePtr& rail : rails ? rails->items : ValueList{}) {
    const Value* interface = rail->get("interface");
    if (!interface) continue;
    rail_interfaces.push_back(interface->text);
    if (interface->text == "eth0" && v.first(interface)) {
      v.diagnostics.report(Code::E0428, interface->range,
                           "a rail on `eth0`, the pod's primary interface",
                           "attachments are added as `net1`, `net2`, ...: name one of those");
    }
  }
  const Value* tcp = get_path(v.cluster, {"network", "tcp", "interfaces"});
  for (const ValuePtr& name : tcp ? tcp->items : ValueList{}) {
    const std::string& text = name->text;
    bool in_pod =
        text == "eth0" || text.starts_with("net") ||
        std::find(rail_interfaces.begin(), rail_interfaces.end(), text) != rail_interfaces.end();
    if (in_pod || !v.first(name.get())) continue;
    v.diagnostics.report(Code::W0406, name->range,
                         "`" + text + "` is a host's interface name, not a pod's",
                         "pods have `eth0` and their attachments (`net1`, ...); leave "
                         "`interfaces` empty for the one that reaches rank 0");
  }
}

}  // namespace

void check_usage(const Value& env, const UsageContext& context, CheckedValues& checked,
                 Diagnostics& diagnostics) {
  const Value* cluster = env.get("cluster");
  if (!cluster) return;
  const View v{env, cluster, context, context.in_pods, checked, diagnostics};
  check_env_name(v);
  check_quantities(v);
  check_gpus(v);
  check_twice(v, env.get("services"), "service");
  if (const Value* tools = get_path(&env, {"image", "tools"}); v.first(tools)) {
    check_twice(v, tools, "tool");
  }
  check_command(v);
  check_run_fields(v);
  check_pod_interfaces(v);
}

}  // namespace mlenv::check
