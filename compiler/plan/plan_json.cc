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
    plan.target = text_of(root, "target");
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
    return plan;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::string plan_json_source(std::string_view text) {
  constexpr std::string_view kKey = "\"source\":";
  std::size_t at = text.find(kKey);
  if (at == std::string_view::npos) return {};
  std::size_t open = text.find('"', at + kKey.size());
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
