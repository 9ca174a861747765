#include "compiler/plan/plan_json.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>

#include "compiler/base/file_name.h"
#include "compiler/diag/render.h"

namespace mlenv::plan {
namespace {

// plan.json is JSON, which YAML 1.2 reads as flow style; yaml-cpp is already a dependency.
std::string text_of(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  if (!value || !value.IsScalar())
    throw std::runtime_error(std::string("missing string `") + key + "`");
  return value.Scalar();
}

std::vector<PlanDigest> digests_of(const YAML::Node& node, const char* key) {
  std::vector<PlanDigest> out;
  const YAML::Node list = node[key];
  if (!list || !list.IsSequence())
    throw std::runtime_error(std::string("missing list `") + key + "`");
  for (const YAML::Node& item : list)
    out.push_back({text_of(item, "path"), text_of(item, "sha256")});
  return out;
}

// The optional string `key`, or `fallback` when absent.
std::string optional_text(const YAML::Node& node, const char* key, const char* fallback) {
  const YAML::Node value = node[key];
  if (!value) return fallback;
  if (!value.IsScalar()) throw std::runtime_error(std::string("`") + key + "` is not a string");
  return value.Scalar();
}

// The optional list `key` (absent: empty).
YAML::Node optional_list(const YAML::Node& node, const char* key) {
  const YAML::Node list = node[key];
  if (list && !list.IsSequence())
    throw std::runtime_error(std::string("`") + key + "` is not a list");
  return list;
}

// Plans written before `actions` existed: a build after each BuildConfig (no digest to read)
// and a rollout wait after each StatefulSet, as apply always did.
std::vector<PlanAction> derived_actions(const std::vector<PlanObject>& objects) {
  std::vector<PlanAction> out;
  for (const PlanObject& object : objects) {
    if (object.kind == "BuildConfig")
      out.push_back({"build", object.address, object.name, "", "", "", "", ""});
    if (object.kind == "StatefulSet")
      out.push_back({"rollout", object.address, "", "", "", "", "", ""});
  }
  return out;
}

// The keys the day-2 commands read (`nodes`, `storage`, `ports`), each optional.
void read_day2_keys(const YAML::Node& root, PlanManifest& plan) {
  if (const YAML::Node nodes = root["nodes"]) plan.nodes = nodes.as<int>();
  if (plan.nodes < 0) throw std::runtime_error("`nodes` is negative");
  const YAML::Node storage = root["storage"];
  std::string mode = storage ? storage.as<std::string>() : "per_pod";
  if (mode != "rwx" && mode != "per_pod")
    throw std::runtime_error("unknown storage `" + printable(mode) + "`");
  plan.shared_workspace = mode == "rwx";
  if (const YAML::Node ports = root["ports"]) {
    for (const auto& item : ports) {
      int port = item.second.as<int>();
      if (port < 1 || port > 65535) throw std::runtime_error("a port is out of range");
      plan.ports[item.first.as<std::string>()] = port;
    }
  }
}

void read_additions(const YAML::Node& root, PlanManifest& plan) {
  read_day2_keys(root, plan);
  plan.env_kind = optional_text(root, "env_kind", "dev");
  if (plan.env_kind != "dev" && plan.env_kind != "run" && plan.env_kind != "acceptance")
    throw std::runtime_error("unknown env_kind `" + plan.env_kind + "`");
  for (const YAML::Node& item : optional_list(root, "secrets")) {
    PlanSecret secret{text_of(item, "name"), text_of(item, "key"), item["random_bytes"].as<int>()};
    if (secret.random_bytes < 1 || secret.random_bytes > 4096)
      throw std::runtime_error("secret `" + secret.name + "`: random_bytes must be 1..4096");
    const std::string encoding = optional_text(item, "encoding", "");
    if (encoding != "" && encoding != "hex")
      throw std::runtime_error("secret `" + secret.name + "`: unknown encoding `" + encoding + "`");
    secret.hex = encoding == "hex";
    plan.secrets.push_back(std::move(secret));
  }
  for (const YAML::Node& item : optional_list(root, "grants"))
    plan.grants.push_back({text_of(item, "scc"), text_of(item, "service_account")});
  const YAML::Node actions = optional_list(root, "actions");
  if (!actions) {
    plan.actions = derived_actions(plan.objects);
    return;
  }
  for (const YAML::Node& item : actions) {
    PlanAction action{text_of(item, "action"),
                      text_of(item, "after"),
                      optional_text(item, "build_config", ""),
                      optional_text(item, "image_stream_tag", ""),
                      optional_text(item, "image", ""),
                      optional_text(item, "dockerfile", ""),
                      optional_text(item, "script", ""),
                      optional_text(item, "runtime", "")};
    if (action.action != "build" && action.action != "push" && action.action != "rollout" &&
        action.action != "complete" && action.action != "submit" && action.action != "start")
      throw std::runtime_error("unknown action `" + action.action + "`");
    if (action.action == "build" && action.build_config.empty())
      throw std::runtime_error("build action without `build_config`");
    if (action.action == "push" && (action.image.empty() || action.dockerfile.empty()))
      throw std::runtime_error("push action without `image` and `dockerfile`");
    // A Slurm env has no objects: its job is submitted after nothing.
    if (action.action == "submit") {
      if (action.script.empty() || action.script.find('/') != std::string::npos)
        throw std::runtime_error("submit action without a `script` in the env directory");
      plan.actions.push_back(std::move(action));
      continue;
    }
    // Nor has a local env: its nodes are started after nothing.
    if (action.action == "start" && action.after.empty()) {
      plan.actions.push_back(std::move(action));
      continue;
    }
    auto named = [&](const PlanObject& object) { return object.address == action.after; };
    if (std::none_of(plan.objects.begin(), plan.objects.end(), named))
      throw std::runtime_error("action `" + action.action + "` after `" + action.after +
                               "`, which is not an object of the env");
    plan.actions.push_back(std::move(action));
  }
}

// A cursor over JSON text that reads flat objects: string keys, string, number and boolean
// values.
class FlatJson {
 public:
  explicit FlatJson(std::string_view text, std::size_t at) : text_(text), at_(at) {}

  bool take(char c) {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])) != 0) ++at_;
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }

  std::optional<std::string> string() {
    if (!take('"')) return std::nullopt;
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      if (text_[at_] == '\\') {
        if (++at_ >= text_.size() || text_[at_] == 'u') return std::nullopt;  // not in names
        const char escaped = text_[at_];
        out += escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
      } else {
        out += text_[at_];
      }
      ++at_;
    }
    if (at_ >= text_.size()) return std::nullopt;
    ++at_;
    return out;
  }

  // A string, or the bare token of a number or boolean.
  std::optional<std::string> value() {
    take(' ');
    if (at_ < text_.size() && text_[at_] == '"') return string();
    std::size_t begin = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) != 0 ||
                                  text_[at_] == '-' || text_[at_] == '.'))
      ++at_;
    if (begin == at_) return std::nullopt;
    return std::string(text_.substr(begin, at_ - begin));
  }

 private:
  std::string_view text_;
  std::size_t at_;
};

// One `{...}` of `objects` into `object`; false when it is not flat.
bool scan_object(FlatJson& json, PlanObject& object) {
  if (!json.take('{')) return false;
  if (json.take('}')) return true;
  do {
    std::optional<std::string> key = json.string();
    std::optional<std::string> value;
    if (!key || !json.take(':') || !(value = json.value())) return false;
    if (*key == "address") object.address = *value;
    if (*key == "kind") object.kind = *value;
    if (*key == "file") object.file = *value;
    if (*key == "admin") object.admin = *value == "true";
    if (*key == "shared") object.shared = *value == "true";
  } while (json.take(','));
  return json.take('}');
}

}  // namespace

std::optional<std::vector<PlanObject>> scan_plan_objects(std::string_view text) {
  std::size_t at = text.find("\"objects\":");
  if (at == std::string_view::npos) return std::nullopt;
  FlatJson json(text, at + 10);
  if (!json.take('[')) return std::nullopt;
  std::vector<PlanObject> out;
  if (json.take(']')) return out;
  do {
    if (!scan_object(json, out.emplace_back())) return std::nullopt;
  } while (json.take(','));
  if (!json.take(']')) return std::nullopt;
  return out;
}

std::optional<PlanManifest> parse_plan_json(std::string_view text, std::string& error) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) throw std::runtime_error("not a JSON object");
    PlanManifest plan;
    plan.format_version = root["format_version"].as<int>();
    if (plan.format_version != 1) {
      throw std::runtime_error("unknown format_version " + std::to_string(plan.format_version));
    }
    plan.compiler_version = text_of(root, "compiler_version");
    // `target` before plans named the platform; those were all OpenShift's.
    const std::string platform =
        root["platform"] ? text_of(root, "platform") : text_of(root, "target");
    if (!platform.empty()) {
      std::optional<ir::Platform> known = ir::parse_platform(platform);
      if (!known) throw std::runtime_error("unknown platform `" + platform + "`");
      plan.platform = *known;
    }
    plan.source = text_of(root, "source");
    plan.cluster = text_of(root, "cluster");
    plan.api = optional_text(root, "api", "");
    plan.env = text_of(root, "env");
    plan.namespace_ = text_of(root, "namespace");
    if (root["inputs"]) plan.inputs = digests_of(root, "inputs");
    plan.inputs_sha256 = optional_text(root, "inputs_sha256", "");
    plan.files = digests_of(root, "files");
    const YAML::Node objects = root["objects"];
    if (!objects || !objects.IsSequence()) throw std::runtime_error("missing list `objects`");
    for (const YAML::Node& item : objects) {
      PlanObject object;
      object.address = text_of(item, "address");
      object.api_version = text_of(item, "api_version");
      object.kind = text_of(item, "kind");
      object.namespace_ = text_of(item, "namespace");
      object.name = text_of(item, "name");
      object.file = text_of(item, "file");
      object.sha256 = text_of(item, "sha256");
      object.order = item["order"].as<int>();
      object.admin = item["admin"].as<bool>();
      object.shared = item["shared"] && item["shared"].as<bool>();
      plan.objects.push_back(std::move(object));
    }
    std::stable_sort(plan.objects.begin(), plan.objects.end(),
                     [](const PlanObject& a, const PlanObject& b) { return a.order < b.order; });
    read_additions(root, plan);
    return plan;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::string plan_json_source(std::string_view text) {
  return plan_json_string(text, "source");
}

std::string plan_json_string(std::string_view text, std::string_view key) {
  const std::string quoted = "\"" + std::string(key) + "\":";
  std::size_t at = text.find(quoted);
  if (at == std::string_view::npos) return {};
  std::size_t open = text.find('"', at + quoted.size());
  if (open == std::string_view::npos) return {};
  std::string out;
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      out += text[++i];
    } else if (text[i] == '"') {
      return out;
    } else {
      out += text[i];
    }
  }
  return {};
}

std::string program_inputs_path(std::string_view source) {
  return "_inputs/" + escape_file_name(source) + ".json";
}

std::optional<std::vector<PlanDigest>> parse_program_inputs(std::string_view text,
                                                            std::string& error) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) throw std::runtime_error("not a JSON object");
    return digests_of(root, "inputs");
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::string api_group(std::string_view api_version) {
  std::size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(api_version.substr(0, slash));
}

}  // namespace mlenv::plan
