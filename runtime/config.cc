#include "config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "exit_code.h"
#include "json.h"
#include "util.h"

namespace boot {
namespace {

[[noreturn]] void invalid(const std::string& key, const std::string& why) {
  throw BootError(kExitConfigError, "boot.json: `" + key + "` " + why);
}

// Keys are `const char*`: with a `const std::string&`, GCC 13's -Wdangling-reference warns at
// every call that passes a literal and binds the result to a reference.
const Json& require(const Json& object, const char* key) {
  const Json* value = object.find(key);
  if (!value) invalid(key, "is missing");
  return *value;
}

std::string get_string(const Json& object, const std::string& key, const std::string& path) {
  const Json& value = require(object, key.c_str());
  if (!value.is_string()) invalid(path, "must be a string");
  return value.as_string();
}

// A string that may be absent, read as "".
std::string optional_string(const Json& object, const std::string& key, const std::string& path) {
  const Json* value = object.find(key);
  if (!value || value->is_null()) return "";
  if (!value->is_string()) invalid(path, "must be a string");
  return value->as_string();
}

std::int64_t get_int(const Json& value, const std::string& path, std::int64_t min,
                     std::int64_t max) {
  if (!value.is_integer()) invalid(path, "must be an integer");
  std::int64_t number = value.as_int();
  if (number < min || number > max) {
    invalid(path, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  }
  return number;
}

// Every duration is checked against its documented bounds: unchecked, rendezvous_s = 1e10
// overflowed into an immediate timeout and heartbeat_s = 0.001 into false peer losses.
double get_seconds(const Json& object, const std::string& key, const std::string& path,
                   double fallback, DurationBounds bounds) {
  const Json* value = object.find(key);
  if (!value) return fallback;
  if (!value->is_number()) invalid(path, "must be a number of seconds");
  if (std::optional<std::string> why = check_duration(value->as_number(), bounds)) {
    invalid(path, *why);
  }
  return value->as_number();
}

std::vector<std::string> get_strings(const Json& value, const std::string& path) {
  if (!value.is_array()) invalid(path, "must be a list of strings");
  std::vector<std::string> out;
  for (const Json& item : value.as_array()) {
    if (!item.is_string()) invalid(path, "must be a list of strings");
    out.push_back(item.as_string());
  }
  return out;
}

bool is_gdr_level(const std::string& level) {
  for (const char* name : {"LOC", "PIX", "PXB", "PHB", "SYS", "NVL", "NVB", "C2C", "P2C", "PXN"}) {
    if (level == name) return true;
  }
  return false;
}

void parse_rdma(const Json& rdma, BootConfig& config) {
  if (!rdma.is_object()) invalid("rdma", "must be an object");
  if (const Json* rails = rdma.find("rails")) {
    if (!rails->is_array()) invalid("rdma.rails", "must be a list");
    for (const Json& rail : rails->as_array()) {
      if (!rail.is_object()) invalid("rdma.rails", "must hold objects");
      RdmaRail entry;
      entry.device = optional_string(rail, "device", "rdma.rails[].device");
      entry.interface = optional_string(rail, "interface", "rdma.rails[].interface");
      entry.link_layer = optional_string(rail, "link_layer", "rdma.rails[].link_layer");
      if (!entry.link_layer.empty() && entry.link_layer != "ethernet" &&
          entry.link_layer != "infiniband") {
        invalid("rdma.rails[].link_layer", "must be \"ethernet\" or \"infiniband\"");
      }
      entry.network = optional_string(rail, "network", "rdma.rails[].network");
      entry.resource = optional_string(rail, "resource", "rdma.rails[].resource");
      if (entry.device.empty() && entry.interface.empty()) {
        invalid("rdma.rails[]", "needs an interface or a device");
      }
      config.rails.push_back(std::move(entry));
    }
  }
  if (const Json* gid = rdma.find("gid_index"); gid && !gid->is_null()) {
    config.gid_index = static_cast<int>(get_int(*gid, "rdma.gid_index", 0, 255));
  }
  if (const Json* level = rdma.find("gdr_level"); level && !level->is_null()) {
    // Integers meant different levels in different NCCL releases, so only names are accepted.
    if (!level->is_string() || !is_gdr_level(level->as_string())) {
      invalid("rdma.gdr_level", "must be one of LOC, PIX, PXB, PHB, SYS, NVL, NVB, C2C, P2C, PXN");
    }
    config.gdr_level = level->as_string();
  }
  if (const Json* floor = rdma.find("min_memlock_bytes")) {
    config.min_memlock_bytes =
        static_cast<std::uint64_t>(get_int(*floor, "rdma.min_memlock_bytes", 0, INT64_MAX / 2));
  }
}

const Json& require_object(const Json& object, const char* key) {
  const Json& value = require(object, key);
  if (!value.is_object()) invalid(key, "must be an object");
  return value;
}

// `rank`: {"env": NAME} or {"hostname_ordinal": true}, never both.
RankSource parse_rank(const Json& root) {
  const Json& rank = require_object(root, "rank");
  RankSource source;
  source.env = optional_string(rank, "env", "rank.env");
  if (const Json* ordinal = rank.find("hostname_ordinal"); ordinal && !ordinal->is_null()) {
    if (!ordinal->is_bool()) invalid("rank.hostname_ordinal", "must be true or false");
    source.hostname_ordinal = ordinal->as_bool();
  }
  if (source.env.empty() == !source.hostname_ordinal) {
    invalid("rank", "needs exactly one of `env` (a variable name) and `hostname_ordinal: true`");
  }
  return source;
}

// `rendezvous`: rank 0's host or the variable holding it (exactly one), and the port.
Rendezvous parse_rendezvous(const Json& root) {
  const Json& object = require_object(root, "rendezvous");
  Rendezvous rendezvous;
  rendezvous.host = optional_string(object, "host", "rendezvous.host");
  rendezvous.host_env = optional_string(object, "host_env", "rendezvous.host_env");
  if (rendezvous.host.empty() == rendezvous.host_env.empty()) {
    invalid("rendezvous", "needs exactly one of `host` and `host_env`");
  }
  const Json* port = object.find("port");
  if (!port) invalid("rendezvous.port", "is missing");
  rendezvous.port = static_cast<int>(get_int(*port, "rendezvous.port", 1, 65535));
  return rendezvous;
}

}  // namespace

std::optional<double> parse_duration(std::string_view text) {
  text = trim(text);
  struct Unit {
    std::string_view suffix;
    double seconds;
  };
  double scale = 1;
  for (Unit unit : {Unit{"ms", 0.001}, Unit{"s", 1}, Unit{"m", 60}, Unit{"h", 3600}}) {
    if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
      text.remove_suffix(unit.suffix.size());
      scale = unit.seconds;
      break;
    }
  }
  if (text.empty()) return std::nullopt;
  std::string number(text);
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !(value > 0)) return std::nullopt;
  // strtod takes "inf" and "nan", and 1e308h overflows; neither is a duration.
  if (!std::isfinite(value * scale)) return std::nullopt;
  return value * scale;
}

std::optional<std::string> check_duration(double seconds, DurationBounds bounds) {
  bool above_min = bounds.min_allowed ? seconds >= bounds.min : seconds > bounds.min;
  // Written so that NaN fails both comparisons and is refused.
  if (above_min && seconds <= bounds.max) return std::nullopt;
  auto text = [](double value) {
    char out[32];
    std::snprintf(out, sizeof out, "%g", value);
    return std::string(out);
  };
  return std::string("must be a number of seconds ") + (bounds.min_allowed ? ">= " : "> ") +
         text(bounds.min) + " and <= " + text(bounds.max);
}

BootConfig parse_config(std::string_view text) {
  JsonParseResult parsed = parse_json(text);
  if (!parsed.value) {
    throw BootError(kExitConfigError,
                    "boot.json: " + parsed.error + " at byte " + std::to_string(parsed.offset));
  }
  const Json& root = *parsed.value;
  if (!root.is_object()) throw BootError(kExitConfigError, "boot.json: not a JSON object");

  BootConfig config;
  config.format_version =
      static_cast<int>(get_int(require(root, "format_version"), "format_version", 0, INT32_MAX));
  if (config.format_version != 3) {
    invalid("format_version", "is " + std::to_string(config.format_version) +
                                  "; this mlenv-boot reads version 3 only");
  }
  config.job = get_string(root, "job", "job");
  if (config.job.empty()) invalid("job", "must not be empty");
  config.rank = parse_rank(root);
  config.rendezvous = parse_rendezvous(root);
  config.nnodes = static_cast<int>(get_int(require(root, "nnodes"), "nnodes", 1, 65536));
  config.nproc_per_node =
      static_cast<int>(get_int(require(root, "nproc_per_node"), "nproc_per_node", 1, 1024));
  if (const Json* gpus = root.find("gpus_per_node")) {
    config.gpus_per_node = static_cast<int>(get_int(*gpus, "gpus_per_node", 0, 1024));
  }
  config.master_port =
      static_cast<int>(get_int(require(root, "master_port"), "master_port", 1, 65535));
  if (config.rendezvous.port == config.master_port) {
    invalid("rendezvous.port", "must differ from master_port, which rank 0's trainer listens on");
  }
  config.transport = get_string(root, "transport", "transport");
  if (config.transport != "rdma" && config.transport != "auto" && config.transport != "tcp") {
    invalid("transport", "must be \"rdma\", \"auto\" or \"tcp\"");
  }
  if (const Json* rdma = root.find("rdma"); rdma && !rdma->is_null()) parse_rdma(*rdma, config);
  if (const Json* tcp = root.find("tcp"); tcp && !tcp->is_null()) {
    if (const Json* interfaces = tcp->find("interfaces")) {
      config.tcp_interfaces = get_strings(*interfaces, "tcp.interfaces");
    }
  }
  if (const Json* timeouts = root.find("timeouts")) {
    if (!timeouts->is_object()) invalid("timeouts", "must be an object");
    config.discovery_s = get_seconds(*timeouts, "discovery_s", "timeouts.discovery_s",
                                     config.discovery_s, kDeadlineBounds);
    config.rendezvous_s = get_seconds(*timeouts, "rendezvous_s", "timeouts.rendezvous_s",
                                      config.rendezvous_s, kDeadlineBounds);
    config.heartbeat_s = get_seconds(*timeouts, "heartbeat_s", "timeouts.heartbeat_s",
                                     config.heartbeat_s, kHeartbeatBounds);
    config.grace_s =
        get_seconds(*timeouts, "grace_s", "timeouts.grace_s", config.grace_s, kGraceBounds);
  }
  if (const Json* command = root.find("command")) {
    config.command = get_strings(*command, "command");
  }
  config.launcher = optional_string(root, "launcher", "launcher");
  if (!config.launcher.empty() && std::find(std::begin(kLaunchers), std::end(kLaunchers),
                                            config.launcher) == std::end(kLaunchers)) {
    invalid("launcher", "must be \"\", \"torchrun\", \"deepspeed\" or \"accelerate\"");
  }
  if (const Json* words = root.find("launcher_words")) {
    config.launcher_words = static_cast<size_t>(
        get_int(*words, "launcher_words", 1, static_cast<std::int64_t>(config.command.size())));
  }
  if (const Json* services = root.find("services")) {
    if (!services->is_array()) invalid("services", "must be a list");
    for (const Json& service : services->as_array()) {
      Service entry{get_string(service, "name", "services[].name"),
                    get_strings(require(service, "argv"), "services[].argv")};
      if (entry.argv.empty()) invalid("services[].argv", "must not be empty");
      config.services.push_back(std::move(entry));
    }
  }
  config.hostfile = get_string(root, "hostfile", "hostfile");
  config.deepspeed_env = get_string(root, "deepspeed_env", "deepspeed_env");
  config.shell_env = optional_string(root, "shell_env", "shell_env");
  config.network_status = optional_string(root, "network_status", "network_status");
  if (const Json* port = root.find("debugpy_port")) {
    config.debugpy_port = static_cast<int>(get_int(*port, "debugpy_port", 0, 65535));
  }
  if (const Json* check = root.find("nccl_check"); check && !check->is_null()) {
    if (const Json* min = check->find("min_busbw_gbps")) {
      if (!min->is_number() || min->as_number() < 0) {
        invalid("nccl_check.min_busbw_gbps", "must be a number >= 0");
      }
      config.nccl_min_busbw_gbps = min->as_number();
    }
    if (const Json* max = check->find("max_bytes")) {
      config.nccl_max_bytes = static_cast<std::uint64_t>(
          get_int(*max, "nccl_check.max_bytes", 8, std::int64_t{1} << 40));
    }
    config.nccl_timeout_s = get_seconds(*check, "timeout_s", "nccl_check.timeout_s",
                                        config.nccl_timeout_s, kDeadlineBounds);
    config.nccl_step_timeout_s = get_seconds(*check, "step_timeout_s", "nccl_check.step_timeout_s",
                                             config.nccl_step_timeout_s, kDeadlineBounds);
    if (const Json* diagnose = check->find("diagnose")) {
      if (!diagnose->is_bool()) invalid("nccl_check.diagnose", "must be true or false");
      config.nccl_diagnose = diagnose->as_bool();
    }
  }
  return config;
}

BootConfig load_config(const std::string& path) {
  std::optional<std::string> text = read_file(path);
  if (!text) throw BootError(kExitConfigError, "cannot read the config " + path);
  return parse_config(*text);
}

}  // namespace boot
