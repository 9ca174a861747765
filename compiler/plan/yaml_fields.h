#pragma once
// Kubernetes objects as flat field maps, so two versions of an object compare field by field:
// `spec.template.spec.containers[name=main].resources.limits["nvidia.com/gpu"]` -> `4`.

#include <map>
#include <string>
#include <string_view>

namespace YAML {
class Node;
}

namespace mlenv::plan {

/// Every leaf of a YAML document by dotted path. Values are shown as written: quoted strings
/// keep their quotes, so `"8080"` and `8080` differ; empty maps and lists are `{}` and `[]`.
/// List items that are maps with a unique scalar `name` are addressed `[name=x]`, else `[i]`.
using FieldMap = std::map<std::string, std::string>;

/// Flattens one parsed YAML document.
FieldMap flatten(const YAML::Node& document);

/// True for a plain (unquoted) scalar that YAML 1.2's core schema reads as a string, so it can
/// be written as a JSON string; false for null, booleans and numbers.
bool plain_scalar_is_string(std::string_view text);

/// The `Kind/name` of a parsed object, or "" when it has no kind or metadata.name.
std::string object_address(const YAML::Node& document);

}  // namespace mlenv::plan
