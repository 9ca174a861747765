#include "compiler/plan/plan_json.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

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
      out.push_back({"build", object.address, object.name, "", "", "", ""});
    if (object.kind == "StatefulSet")
      out.push_back({"rollout", object.address, "", "", "", "", ""});
  }
  return out;
}

void read_additions(const YAML::Node& root, PlanManifest& plan) {
  plan.env_kind = optional_text(root, "env_kind", "dev");
  if (plan.env_kind != "dev" && plan.env_kind != "run" && plan.env_kind != "acceptance")
    throw std::runtime_error("unknown env_kind `" + plan.env_kind + "`");
  for (const YAML::Node& item : optional_list(root, "secrets")) {
    PlanSecret secret{text_of(item, "name"), text_of(item, "key"), item["random_bytes"].as<int>()};
    if (secret.random_bytes < 1 || secret.random_bytes > 4096)
      throw std::runtime_error("secret `" + secret.name + "`: random_bytes must be 1..4096");
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
                      optional_text(item, "script", "")};
    if (action.action != "build" && action.action != "push" && action.action != "rollout" &&
        action.action != "complete" && action.action != "submit")
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
    auto named = [&](const PlanObject& object) { return object.address == action.after; };
    if (std::none_of(plan.objects.begin(), plan.objects.end(), named))
      throw std::runtime_error("action `" + action.action + "` after `" + action.after +
                               "`, which is not an object of the env");
    plan.actions.push_back(std::move(action));
  }
}

}  // namespace

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
    plan.platform = root["platform"] ? text_of(root, "platform") : text_of(root, "target");
    if (plan.platform.empty()) plan.platform = "openshift";
    plan.source = text_of(root, "source");
    plan.cluster = text_of(root, "cluster");
    plan.env = text_of(root, "env");
    plan.namespace_ = text_of(root, "namespace");
    plan.inputs = digests_of(root, "inputs");
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

std::string api_group(std::string_view api_version) {
  std::size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(api_version.substr(0, slash));
}

}  // namespace mlenv::plan
