#include "targets/common/object.h"

#include <cctype>

namespace mlenv::target {

std::string Object::file_name() const {
  std::string out;
  out.reserve(kind.size() + name.size() + 6);
  for (char c : kind) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  out += '-';
  out += name;
  out += ".yaml";
  return out;
}

Value string_map(const std::map<std::string, std::string>& entries) {
  Value out = Value::map();
  for (const auto& [k, v] : entries) out.set(k, v);
  return out;
}

Object make_object(std::string api_version, std::string kind, std::string name,
                   std::string namespace_name, const std::map<std::string, std::string>& labels,
                   const std::map<std::string, std::string>& annotations) {
  Object o;
  o.api_version = std::move(api_version);
  o.kind = std::move(kind);
  o.name = std::move(name);
  o.namespace_name = std::move(namespace_name);
  o.body = Value::map();
  o.body.set("apiVersion", o.api_version);
  o.body.set("kind", o.kind);
  Value& meta = o.body.set("metadata", Value::map());
  meta.set("name", o.name);
  if (!o.namespace_name.empty()) meta.set("namespace", o.namespace_name);
  if (!labels.empty()) meta.set("labels", string_map(labels));
  if (!annotations.empty()) meta.set("annotations", string_map(annotations));
  return o;
}

}  // namespace mlenv::target
