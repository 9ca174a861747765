#pragma once
// A strict OpenAPI v2 validator for emitted objects: resolves `$ref`s, finds an object's
// definition by x-kubernetes-group-version-kind (or by the definition's name where a document
// has no such extension, as OpenShift's does), and checks types, required fields, unknown
// fields, enums, int-or-string and quantities. CRD schemas (openAPIV3Schema) can be added too.
// Scalars are typed the way YAML 1.1 readers type them, so an unquoted `"8080"` is an error.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace mlenv::openapi {

/// One validation failure: where in the object (`spec.template.spec.containers[0].foo`) and why.
struct Issue {
  std::string path;
  std::string message;
};

/// What a target's admission webhooks refuse in an object that its schema allows
/// (Provider::admission_rules; Kubernetes' are targets/kubernetes/admission.h).
using AdmissionRules = std::vector<Issue> (*)(const YAML::Node& object);

class Validator {
 public:
  /// A validator with no documents yet, which runs `admission` after each object's schema.
  explicit Validator(std::vector<AdmissionRules> admission = {})
      : admission_(std::move(admission)) {}

  /// Adds an OpenAPI v2 document (JSON or YAML text). Returns "" or why it was rejected.
  std::string add_document(const std::string& text);
  /// Adds the openAPIV3Schema of every served version of a CustomResourceDefinition (YAML):
  /// any CRD, read generically. Returns "" or an error.
  std::string add_crd(const std::string& text);
  /// Adds a file: a CRD when it says `kind: CustomResourceDefinition`, else an OpenAPI document.
  std::string add_file(const std::string& path);

  /// Whether some added document defines `apiVersion` + `kind`.
  bool knows(const std::string& api_version, const std::string& kind) const;
  /// Validates one object against its schema, then every admission rule the validator was
  /// made with; an object of a kind no document defines yields one issue.
  std::vector<Issue> validate(const YAML::Node& object) const;
  /// Validates every document of a YAML text (one object or a `---` stream).
  std::vector<Issue> validate_text(const std::string& yaml) const;

 private:
  const YAML::Node* root_schema(const std::string& api_version, const std::string& kind) const;
  void check(const YAML::Node& value, const YAML::Node& schema, std::string& path,
             std::vector<Issue>& issues, int depth) const;
  const YAML::Node* resolve(const YAML::Node& schema, std::string* ref_name) const;

  std::vector<std::unique_ptr<YAML::Node>> documents_;  ///< keeps parsed documents alive
  std::map<std::string, YAML::Node> definitions_;       ///< by definition name
  std::map<std::string, std::string> by_gvk_;           ///< "group/version/Kind" -> name
  std::map<std::string, YAML::Node> crd_roots_;         ///< "group/version/Kind" -> schema
  std::vector<AdmissionRules> admission_;               ///< run after the schema
};

/// A validator holding the files at `paths`, parsed once per process and cached (the
/// Kubernetes and OpenShift documents are 3-4 MB each), which runs `admission` after each
/// schema (the rules of the validator's first call for `paths`). Errors land in `error`.
const Validator* cached_validator(const std::vector<std::string>& paths, std::string& error,
                                  const std::vector<AdmissionRules>& admission = {});

}  // namespace mlenv::openapi
