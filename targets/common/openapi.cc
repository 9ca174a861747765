#include "targets/common/openapi.h"

#include <fstream>
#include <mutex>
#include <sstream>

#include "compiler/base/pattern.h"
#include "compiler/base/quantity.h"

namespace mlenv::openapi {
namespace {

constexpr int kMaxDepth = 64;
constexpr const char* kObjectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

// The child at `key`, or a null node: yaml-cpp 0.7 throws on most calls to a missing child.
YAML::Node child(const YAML::Node& node, const std::string& key) {
  if (!node.IsDefined() || !node.IsMap()) return YAML::Node();
  YAML::Node c = node[key];
  return c.IsDefined() ? c : YAML::Node();
}

enum class ScalarType { Null, Bool, Int, Float, String };

// Types a scalar the way YAML 1.1 readers do (Kubernetes' own reader among them): quoted and
// block scalars are strings, plain ones may be null, booleans or numbers.
ScalarType scalar_type(const YAML::Node& node) {
  if (node.Tag() != "?") return ScalarType::String;
  const std::string& s = node.Scalar();
  static const Pattern kNull = Pattern::literal("~|null|Null|NULL|");
  static const Pattern kBool = Pattern::literal(
      "y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|"
      "on|On|ON|off|Off|OFF");
  static const Pattern kInt = Pattern::literal(
      "[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?0o?[0-7_]+|"
      "[-+]?0b[01_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+");
  static const Pattern kFloat = Pattern::literal(
      "[-+]?([0-9][0-9_]*)?\\.[0-9_]*([eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+|"
      "[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)");
  if (kNull.matches(s)) return ScalarType::Null;
  if (kBool.matches(s)) return ScalarType::Bool;
  if (kInt.matches(s)) return ScalarType::Int;
  if (kFloat.matches(s)) return ScalarType::Float;
  return ScalarType::String;
}

const char* type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Null:
      return "null";
    case ScalarType::Bool:
      return "boolean";
    case ScalarType::Int:
      return "integer";
    case ScalarType::Float:
      return "number";
    case ScalarType::String:
      return "string";
  }
  return "?";
}

std::string node_kind(const YAML::Node& n) {
  if (n.IsMap()) return "object";
  if (n.IsSequence()) return "array";
  if (n.IsNull()) return "null";
  return type_name(scalar_type(n));
}

std::string read_file(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read `" + path + "`";
    return "";
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string gvk_key(const std::string& group, const std::string& version, const std::string& kind) {
  return group + "/" + version + "/" + kind;
}

void split_api_version(const std::string& api_version, std::string& group, std::string& version) {
  std::size_t slash = api_version.find('/');
  if (slash == std::string::npos) {
    group = "";
    version = api_version;
  } else {
    group = api_version.substr(0, slash);
    version = api_version.substr(slash + 1);
  }
}

}  // namespace

std::string Validator::add_document(const std::string& text) {
  auto doc = std::make_unique<YAML::Node>();
  try {
    *doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return std::string("not a JSON or YAML document: ") + e.what();
  }
  YAML::Node definitions = child((*doc), "definitions");
  if (!definitions.IsMap()) return "not an OpenAPI v2 document (no `definitions`)";
  for (auto it = definitions.begin(); it != definitions.end(); ++it) {
    std::string name = it->first.as<std::string>();
    YAML::Node schema = it->second;
    definitions_.emplace(name, schema);
    YAML::Node gvks = child(schema, "x-kubernetes-group-version-kind");
    if (!gvks.IsSequence()) continue;
    for (const YAML::Node& g : gvks) {
      by_gvk_.emplace(
          gvk_key(child(g, "group").as<std::string>(""), child(g, "version").as<std::string>(""),
                  child(g, "kind").as<std::string>("")),
          name);
    }
  }
  documents_.push_back(std::move(doc));
  return "";
}

namespace {

// The API server accepts `apiVersion`, `kind` and `metadata` at a custom resource's root whether
// or not its schema names them (apiextensions-apiserver, pkg/apiserver/schema/pruning/
// algorithm.go keeps them at the root; the NetworkAttachmentDefinition CRD names only `spec`).
void add_root_fields(YAML::Node schema) {
  YAML::Node properties = schema["properties"];
  for (const char* key : {"apiVersion", "kind"}) {
    if (!properties[key].IsDefined() || properties[key].IsNull())
      properties[key]["type"] = "string";
  }
  if (!properties["metadata"].IsDefined() || properties["metadata"].IsNull())
    properties["metadata"]["type"] = "object";
}

}  // namespace

std::string Validator::add_crd(const std::string& text) {
  auto doc = std::make_unique<YAML::Node>();
  try {
    *doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return std::string("not a YAML document: ") + e.what();
  }
  YAML::Node spec = child((*doc), "spec");
  std::string group = child(spec, "group").as<std::string>("");
  std::string kind = child(child(spec, "names"), "kind").as<std::string>("");
  if (group.empty() || kind.empty()) return "not a CustomResourceDefinition";
  for (const YAML::Node& v : child(spec, "versions")) {
    // An API server accepts objects only of the versions it serves.
    if (!child(v, "served").as<bool>(false)) continue;
    YAML::Node schema = child(child(v, "schema"), "openAPIV3Schema");
    if (!schema.IsMap()) continue;
    add_root_fields(schema);
    crd_roots_[gvk_key(group, child(v, "name").as<std::string>(""), kind)] = schema;
  }
  documents_.push_back(std::move(doc));
  return "";
}

std::string Validator::add_file(const std::string& path) {
  std::string error;
  std::string text = read_file(path, error);
  if (!error.empty()) return error;
  std::string result = text.find("kind: CustomResourceDefinition") != std::string::npos
                           ? add_crd(text)
                           : add_document(text);
  return result.empty() ? "" : path + ": " + result;
}

const YAML::Node* Validator::root_schema(const std::string& api_version,
                                         const std::string& kind) const {
  std::string group, version;
  split_api_version(api_version, group, version);
  std::string key = gvk_key(group, version, kind);
  if (auto it = crd_roots_.find(key); it != crd_roots_.end()) return &it->second;
  if (auto it = by_gvk_.find(key); it != by_gvk_.end()) return &definitions_.at(it->second);
  // Documents without the GVK extension (OpenShift's): `<prefix>.<group's first label or
  // core>.<version>.<Kind>`, accepted only when exactly one definition matches.
  std::string label = group.empty() ? "core" : group.substr(0, group.find('.'));
  std::string suffix = "." + label + "." + version + "." + kind;
  const YAML::Node* found = nullptr;
  for (const auto& [name, schema] : definitions_) {
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      if (found) return nullptr;
      found = &schema;
    }
  }
  return found;
}

bool Validator::knows(const std::string& api_version, const std::string& kind) const {
  return root_schema(api_version, kind) != nullptr;
}

const YAML::Node* Validator::resolve(const YAML::Node& schema, std::string* ref_name) const {
  YAML::Node ref = child(schema, "$ref");
  if (ref.IsNull()) return &schema;
  std::string target = ref.as<std::string>("");
  const std::string prefix = "#/definitions/";
  if (target.compare(0, prefix.size(), prefix) != 0) return nullptr;
  auto it = definitions_.find(target.substr(prefix.size()));
  if (it == definitions_.end()) return nullptr;
  if (ref_name) *ref_name = it->first;
  return &it->second;
}

void Validator::check(const YAML::Node& value, const YAML::Node& raw_schema, std::string& path,
                      std::vector<Issue>& issues, int depth) const {
  if (depth > kMaxDepth) {
    issues.push_back({path, "nested too deeply"});
    return;
  }
  std::string ref_name;
  const YAML::Node* resolved = resolve(raw_schema, &ref_name);
  if (!resolved) {
    issues.push_back({path, "schema reference `" + child(raw_schema, "$ref").as<std::string>("") +
                                "` is not defined in the document"});
    return;
  }
  const YAML::Node& schema = *resolved;
  auto fail = [&](const std::string& message) { issues.push_back({path, message}); };

  // Definitions whose wire form is a string with its own syntax.
  if (ref_name == "io.k8s.apimachinery.pkg.api.resource.Quantity") {
    if (!value.IsScalar()) return fail("expected a quantity, found " + node_kind(value));
    if (!mlenv::is_quantity(value.Scalar())) fail("`" + value.Scalar() + "` is not a quantity");
    return;
  }
  std::string format = child(schema, "format").as<std::string>("");
  if (format == "int-or-string" || child(schema, "x-kubernetes-int-or-string").as<bool>(false)) {
    if (!value.IsScalar())
      return fail("expected an integer or a string, found " + node_kind(value));
    ScalarType t = scalar_type(value);
    if (t != ScalarType::Int && t != ScalarType::String) {
      fail("expected an integer or a string, found " + std::string(type_name(t)));
    }
    return;
  }

  std::string type = child(schema, "type").as<std::string>("");
  YAML::Node properties = child(schema, "properties");
  if (type.empty() && properties.IsMap()) type = "object";

  if (type == "object") {
    if (!value.IsMap()) return fail("expected an object, found " + node_kind(value));
    YAML::Node additional = child(schema, "additionalProperties");
    bool preserve = child(schema, "x-kubernetes-preserve-unknown-fields").as<bool>(false);
    for (auto it = value.begin(); it != value.end(); ++it) {
      std::string key = it->first.as<std::string>();
      std::size_t mark = path.size();
      path += path.empty() ? key : "." + key;
      YAML::Node field = properties.IsMap() ? child(properties, key) : YAML::Node();
      if (properties.IsMap() && !field.IsNull()) {
        // A CRD's free-form `metadata` is still ObjectMeta on the server.
        if (key == "metadata" && depth == 0 && child(field, "$ref").IsNull() &&
            child(field, "properties").IsNull() && definitions_.count(kObjectMeta)) {
          check(it->second, definitions_.at(kObjectMeta), path, issues, depth + 1);
        } else {
          check(it->second, field, path, issues, depth + 1);
        }
      } else if (additional.IsMap()) {
        check(it->second, additional, path, issues, depth + 1);
      } else if (properties.IsMap() && !preserve && !additional.as<bool>(false)) {
        fail("unknown field `" + key + "`");
      }
      path.resize(mark);
    }
    if (child(schema, "required").IsSequence()) {
      for (const YAML::Node& r : child(schema, "required")) {
        std::string name = r.as<std::string>("");
        if (child(value, name).IsNull()) fail("missing required field `" + name + "`");
      }
    }
    return;
  }
  if (type == "array") {
    if (!value.IsSequence()) return fail("expected an array, found " + node_kind(value));
    YAML::Node items = child(schema, "items");
    if (items.IsNull()) return;
    std::size_t mark = path.size();
    for (std::size_t i = 0; i < value.size(); ++i) {
      path += "[" + std::to_string(i) + "]";
      check(value[i], items, path, issues, depth + 1);
      path.resize(mark);
    }
    return;
  }
  if (type.empty()) return;  // free-form (RawExtension, JSON)
  if (!value.IsScalar()) return fail("expected " + type + ", found " + node_kind(value));
  ScalarType t = scalar_type(value);
  bool ok = (type == "string" && t == ScalarType::String) ||
            (type == "integer" && t == ScalarType::Int) ||
            (type == "number" && (t == ScalarType::Int || t == ScalarType::Float)) ||
            (type == "boolean" && t == ScalarType::Bool);
  if (!ok) {
    return fail("expected " + type + ", found " + type_name(t) + " `" + value.Scalar() + "`");
  }
  YAML::Node allowed = child(schema, "enum");
  if (allowed.IsSequence()) {
    for (const YAML::Node& a : allowed) {
      if (a.IsScalar() && a.Scalar() == value.Scalar()) return;
    }
    fail("`" + value.Scalar() + "` is not one of the allowed values");
  }
}

std::vector<Issue> Validator::validate(const YAML::Node& object) const {
  std::vector<Issue> issues;
  if (!object.IsMap()) return {{"", "an object must be a mapping"}};
  std::string api_version = child(object, "apiVersion").as<std::string>("");
  std::string kind = child(object, "kind").as<std::string>("");
  const YAML::Node* schema = root_schema(api_version, kind);
  if (!schema) return {{"", "no schema for " + api_version + " " + kind}};
  std::string path;
  check(object, *schema, path, issues, 0);
  // What the schema cannot say but the admission webhooks refuse at apply.
  for (AdmissionRules rules : admission_) {
    for (Issue& i : rules(object)) issues.push_back(std::move(i));
  }
  return issues;
}

std::vector<Issue> Validator::validate_text(const std::string& yaml) const {
  std::vector<Issue> issues;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(yaml);
  } catch (const YAML::Exception& e) {
    return {{"", std::string("not YAML: ") + e.what()}};
  }
  for (const YAML::Node& d : docs) {
    if (d.IsNull()) continue;
    for (Issue& i : validate(d)) issues.push_back(std::move(i));
  }
  return issues;
}

const Validator* cached_validator(const std::vector<std::string>& paths, std::string& error,
                                  const std::vector<AdmissionRules>& admission) {
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::unique_ptr<Validator>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(paths);
  if (it != cache.end()) return it->second.get();
  auto v = std::make_unique<Validator>(admission);
  for (const std::string& p : paths) {
    error = v->add_file(p);
    if (!error.empty()) return nullptr;
  }
  return cache.emplace(paths, std::move(v)).first->second.get();
}

}  // namespace mlenv::openapi
