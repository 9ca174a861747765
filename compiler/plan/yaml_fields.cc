#include "compiler/plan/yaml_fields.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <set>

#include "compiler/base/pattern.h"

namespace mlenv::plan {
namespace {

bool is_simple_key(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

std::string key_segment(const std::string& prefix, const std::string& key) {
  if (is_simple_key(key)) return prefix.empty() ? key : prefix + "." + key;
  return prefix + "[" + quoted(key) + "]";
}

// The `name` of every item when all items are maps with distinct scalar names.
bool named_items(const YAML::Node& list) {
  std::set<std::string> names;
  for (const YAML::Node& item : list) {
    if (!item.IsMap()) return false;
    const YAML::Node name = item["name"];
    if (!name || !name.IsScalar() || !names.insert(name.Scalar()).second) return false;
  }
  return !names.empty();
}

void walk(const YAML::Node& node, const std::string& path, FieldMap& out) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      if (node.size() == 0) {
        out[path] = "{}";
        return;
      }
      for (const auto& item : node) {
        walk(item.second, key_segment(path, item.first.as<std::string>()), out);
      }
      return;
    case YAML::NodeType::Sequence: {
      if (node.size() == 0) {
        out[path] = "[]";
        return;
      }
      bool named = named_items(node);
      std::size_t index = 0;
      for (const YAML::Node& item : node) {
        std::string segment =
            named ? "[name=" + item["name"].Scalar() + "]" : "[" + std::to_string(index) + "]";
        walk(item, path + segment, out);
        ++index;
      }
      return;
    }
    case YAML::NodeType::Scalar:
      out[path] = node.Tag() == "!" ? quoted(node.Scalar()) : node.Scalar();
      return;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out[path] = "null";
      return;
  }
}

}  // namespace

FieldMap flatten(const YAML::Node& document) {
  FieldMap out;
  walk(document, "", out);
  return out;
}

bool plain_scalar_is_string(std::string_view text) {
  static const Pattern kNonString = Pattern::literal(
      R"(~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|)"
      R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.nan|\.NaN|\.NAN)");
  if (text.empty()) return false;
  return !kNonString.matches(text);
}

std::string object_address(const YAML::Node& document) {
  if (!document.IsMap()) return {};
  const YAML::Node kind = document["kind"];
  const YAML::Node metadata = document["metadata"];
  if (!kind || !kind.IsScalar() || !metadata || !metadata.IsMap()) return {};
  const YAML::Node name = metadata["name"];
  if (!name || !name.IsScalar()) return {};
  return kind.Scalar() + "/" + name.Scalar();
}

}  // namespace mlenv::plan
