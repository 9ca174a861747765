#pragma once
// The types of schema/: built from the embedded schema files once per process.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/base/pattern.h"
#include "compiler/base/source.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/syntax/ast.h"

namespace mlenv::check {

struct SchemaDef;
struct EnumDef;

/// The declaration kinds; each is also the name of its schema.
inline constexpr const char* kDeclarationKinds[] = {"cluster", "image", "env", "storage",
                                                    "network"};

/// A field's type: a built-in (with its refinement), list/map of a type, an enum or a schema.
struct Type {
  enum class Kind { String, Name, Int, Port, Bool, Quantity, Duration, List, Map, Enum, Schema };
  Kind kind = Kind::String;
  std::optional<std::int64_t> low, high;   ///< int refinement
  std::shared_ptr<const Pattern> pattern;  ///< string refinement, linear-time
  std::string pattern_text;
  std::string pattern_words;            ///< the refinement in words, for diagnostics
  std::shared_ptr<const Type> element;  ///< list/map
  const EnumDef* enumeration = nullptr;
  const SchemaDef* schema = nullptr;

  /// How the type reads in messages: `int(1..16)`, `list(string)`, `storage`, a refined string
  /// in words (`string (an image tag: ...)`).
  std::string describe() const;
};

struct FieldDef {
  std::string name;
  bool optional = false;
  Type type;
  const ast::Expr* default_value = nullptr;
  std::string doc;
  SourceRange range;
};

struct SchemaDef {
  std::string name;
  std::vector<FieldDef> fields;
  std::string doc;
  SourceRange range;
  bool is_kind = false;  ///< a declaration kind: fields of this type accept references

  const FieldDef* field(const std::string& name) const;
  std::vector<std::string> field_names() const;
};

struct EnumDef {
  std::string name;
  std::vector<std::string> members;
  SourceRange range;

  bool has(const std::string& member) const;
};

/// Every schema and enum of schema/, with the syntax trees their defaults point into.
struct TypeRegistry {
  std::map<std::string, SchemaDef> schemas;
  std::map<std::string, EnumDef> enums;
  std::vector<std::unique_ptr<ast::File>> files;

  const SchemaDef* schema(const std::string& name) const;
};

/// Parses the embedded schema files into `sources` and builds the registry. Errors in them
/// are the compiler's own bugs and are reported like any other.
std::unique_ptr<TypeRegistry> load_types(SourceManager& sources, Diagnostics& diagnostics);

/// Whether `s` is an RFC 1123 DNS label (lower-case letters, digits and `-`, at most 63,
/// alphanumeric at both ends): what the `name` type accepts, and what Kubernetes object names
/// built from an env's name must be.
bool is_dns_label(const std::string& s);

}  // namespace mlenv::check
