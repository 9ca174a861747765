#include "compiler/apply/applyset.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include "compiler/base/pattern.h"
#include "compiler/base/sha256.h"
#include "compiler/base/version.h"
#include "compiler/diag/render.h"
#include "compiler/plan/yaml_fields.h"
#include "targets/common/plan_json.h"

namespace mlenv::plan {
namespace {

std::string base64url(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == bytes.size()) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
  } else if (i + 2 == bytes.size()) {
    unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
  }
  return out;
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

std::string json_string(std::string_view text) {
  return "\"" + json_escape(text) + "\"";
}

std::string scalar_json(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  const std::string& tag = node.Tag();
  if (tag == "!" || tag.ends_with(":str") || plain_scalar_is_string(text)) return json_string(text);
  if (text == "~" || text == "null" || text == "Null" || text == "NULL") return "null";
  if (text == "true" || text == "True" || text == "TRUE") return "true";
  if (text == "false" || text == "False" || text == "FALSE") return "false";
  // At most 15 digits: std::stoll throws on more, and a 60,000-digit label must not crash.
  if ((text.starts_with("0x") || text.starts_with("0o")) && text.size() <= 17) {
    return std::to_string(std::stoll(text.substr(2), nullptr, text[1] == 'x' ? 16 : 8));
  }
  static const Pattern kJsonNumber =
      Pattern::literal(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
  if (kJsonNumber.matches(text)) return text;
  return json_string(text);  // `.inf`, `+1`, `1.`: keep the text rather than guess
}

void to_json(const YAML::Node& node, std::string& out) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      out += '{';
      bool first = true;
      for (const auto& item : node) {
        if (!first) out += ',';
        first = false;
        out += json_string(item.first.as<std::string>());
        out += ':';
        to_json(item.second, out);
      }
      out += '}';
      return;
    }
    case YAML::NodeType::Sequence: {
      out += '[';
      bool first = true;
      for (const YAML::Node& item : node) {
        if (!first) out += ',';
        first = false;
        to_json(item, out);
      }
      out += ']';
      return;
    }
    case YAML::NodeType::Scalar:
      out += scalar_json(node);
      return;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out += "null";
      return;
  }
}

}  // namespace

ApplySetParent applyset_parent(const std::string& env, const std::string& namespace_,
                               const std::string& source) {
  std::string name = "applyset-" + env;
  if (!source.empty()) name += "-" + sha256_hex(source).substr(0, 8);
  return applyset_parent_named(name, namespace_);
}

ApplySetParent applyset_parent_named(const std::string& name, const std::string& namespace_) {
  ApplySetParent parent;
  parent.name = name;
  parent.namespace_ = namespace_;
  // KEP-3659: base64url (no padding) of sha256 of `<name>.<namespace>.<Kind>.<group>`.
  std::string digest = unhex(sha256_hex(parent.name + "." + namespace_ + ".ConfigMap."));
  parent.id = "applyset-" + base64url(digest) + "-v1";
  return parent;
}

std::string group_kind(std::string_view api_version, std::string_view kind) {
  std::string group = api_group(api_version);
  return group.empty() ? std::string(kind) : std::string(kind) + "." + group;
}

std::string applyset_parent_json(const ApplySetParent& parent,
                                 const std::set<std::string>& group_kinds) {
  std::string kinds;
  for (const std::string& gk : group_kinds) kinds += (kinds.empty() ? "" : ",") + gk;
  return "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":" +
         json_string(parent.name) + ",\"namespace\":" + json_string(parent.namespace_) +
         ",\"labels\":{\"applyset.k8s.io/id\":" + json_string(parent.id) +
         "},\"annotations\":{\"applyset.k8s.io/contains-group-kinds\":" + json_string(kinds) +
         ",\"applyset.k8s.io/tooling\":" + json_string(std::string("mlenvc/v") + kCompilerVersion) +
         "}}}";
}

std::string object_json(const std::string& yaml, const std::string& label_key,
                        const std::string& label_value) {
  YAML::Node node;
  try {
    node = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(e.what());
  }
  if (!node.IsMap() || !node["metadata"].IsMap())
    throw std::runtime_error("not a Kubernetes object");
  if (!label_key.empty()) {
    YAML::Node metadata = node["metadata"];
    YAML::Node labels = metadata["labels"];
    if (!labels.IsMap()) labels = YAML::Node(YAML::NodeType::Map);
    YAML::Node value(label_value);
    value.SetTag("!");
    labels[label_key] = value;
    metadata["labels"] = labels;
  }
  std::string out;
  to_json(node, out);
  return out;
}

}  // namespace mlenv::plan
