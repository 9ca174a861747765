#include "compiler/check/types.h"

#include <algorithm>

#include "compiler/base/embedded.h"
#include "compiler/parse/parser.h"

namespace mlenv::check {
namespace {

// The refinements of schema/*.mlenv in words, for E0305: users read the form they must write,
// not a regular expression. A pattern missing here is shown as itself.
std::string pattern_in_words(const std::string& pattern) {
  static const std::map<std::string, std::string> kWords = {
      {R"(^[A-Za-z0-9_]+$)", "letters, digits and `_` (`mlx5_2`)"},
      {R"(^[A-Za-z0-9.-]+\/[A-Za-z0-9_.-]+$)",
       "a resource name `DOMAIN/NAME` (`openshift.io/eno5np0rdma`)"},
      {R"(^[0-9A-Fa-f:.]+\/[0-9]{1,3}$)", "an address range in CIDR notation (`192.168.5.0/24`)"},
      {R"(^[0-9A-Fa-f:.]+(\/[0-9]{1,3})?$)",
       "an address or a CIDR range (`192.168.5.1`, `192.168.5.0/30`)"},
      {R"(^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$)",
       "an image tag: letters, digits and `_.-`, not starting with `.` or `-`, at most 128 "
       "characters (`pytorch-2.9-numpy2`)"},
      {R"(^([A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$)",
       "a node label key, optionally with a DNS prefix (`cloud.provider.com/topology-rack`)"},
      {R"(^[A-Za-z0-9_.-]{1,64}$)", "a Slurm name: 1 to 64 letters, digits and `_.-` (`h100`)"},
      {R"(^[A-Za-z0-9_.-]{1,64}(,[A-Za-z0-9_.-]{1,64}){0,15}$)",
       "Slurm partitions: 1 to 16 names of letters, digits and `_.-`, separated by `,` "
       "(`gpu,gpu-long`)"},
      {R"(^(UNLIMITED|INFINITE|([0-9]{1,5}-)?[0-9]{1,6}(:[0-9]{1,2}){0,2})$)",
       "a Slurm time limit: minutes, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S` or `UNLIMITED` "
       "(`01:00:00`)"},
      {R"(^([A-Za-z0-9]([-A-Za-z0-9.]{0,251}[A-Za-z0-9])?|[0-9A-Fa-f:]{2,39})$)",
       "a host name or IP address, without a scheme or port (`api.barcelona.example.com`)"},
      {R"(^\/[^,:\n]*$)", "an absolute path without `,` or `:` (`/shared/workspace`)"},
      {R"(^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]{1,5})?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$)",
       "a registry host with an optional port and lower-case path "
       "(`registry.example.com:5000/team`)"},
  };
  auto it = kWords.find(pattern);
  return it != kWords.end() ? it->second : "the form /" + pattern + "/";
}

struct TypeBuilder {
  TypeRegistry& registry;
  Diagnostics& diagnostics;
  FileId file;

  SourceRange at(const ast::Located& node) const { return {file, node.begin, node.end}; }

  Type build(const ast::TypeExpr& expr) {
    Type type;
    const std::string& name = expr.name.name;
    static const std::map<std::string, Type::Kind> kBuiltins = {{"string", Type::Kind::String},
                                                                {"name", Type::Kind::Name},
                                                                {"int", Type::Kind::Int},
                                                                {"port", Type::Kind::Port},
                                                                {"bool", Type::Kind::Bool},
                                                                {"quantity", Type::Kind::Quantity},
                                                                {"duration", Type::Kind::Duration},
                                                                {"list", Type::Kind::List},
                                                                {"map", Type::Kind::Map}};
    if (auto it = kBuiltins.find(name); it != kBuiltins.end()) {
      type.kind = it->second;
    } else if (auto e = registry.enums.find(name); e != registry.enums.end()) {
      type.kind = Type::Kind::Enum;
      type.enumeration = &e->second;
    } else if (auto s = registry.schemas.find(name); s != registry.schemas.end()) {
      type.kind = Type::Kind::Schema;
      type.schema = &s->second;
    } else {
      diagnostics.report(Code::E0205, at(expr.name), "unknown type `" + name + "`");
      return type;
    }
    if (type.kind == Type::Kind::Port) {
      type.low = 1;
      type.high = 65535;
    }
    for (const ast::TypeArg& arg : expr.args) {
      if (const auto* range = boost::get<ast::Range>(&arg); range && type.kind == Type::Kind::Int) {
        if (range->low) type.low = *range->low;
        if (range->high) type.high = *range->high;
      } else if (const auto* pattern = boost::get<ast::Pattern>(&arg);
                 pattern && type.kind == Type::Kind::String) {
        type.pattern_text = pattern->text;
        type.pattern_words = pattern_in_words(pattern->text);
        std::string error;
        if (std::optional<Pattern> compiled = Pattern::compile(pattern->text, &error)) {
          type.pattern = std::make_shared<const Pattern>(std::move(*compiled));
        } else {
          diagnostics.report(Code::E0301, at(expr), "invalid pattern: " + error);
        }
      } else if (const auto* element = boost::get<ast::TypeExpr>(&arg);
                 element && (type.kind == Type::Kind::List || type.kind == Type::Kind::Map)) {
        type.element = std::make_shared<Type>(build(*element));
      } else {
        diagnostics.report(Code::E0301, at(expr), "`" + name + "` does not take this argument");
      }
    }
    if ((type.kind == Type::Kind::List || type.kind == Type::Kind::Map) && !type.element) {
      diagnostics.report(Code::E0301, at(expr), "`" + name + "` needs an element type");
      type.element = std::make_shared<Type>();
    }
    return type;
  }
};

}  // namespace

std::string Type::describe() const {
  switch (kind) {
    case Kind::String:
      return pattern ? "string (" + pattern_words + ")" : "string";
    case Kind::Name:
      return "name";
    case Kind::Port:
      return "port";
    case Kind::Int: {
      if (!low && !high) return "int";
      return "int(" + (low ? std::to_string(*low) : "") + ".." +
             (high ? std::to_string(*high) : "") + ")";
    }
    case Kind::Bool:
      return "bool";
    case Kind::Quantity:
      return "quantity";
    case Kind::Duration:
      return "duration";
    case Kind::List:
      return "list(" + element->describe() + ")";
    case Kind::Map:
      return "map(" + element->describe() + ")";
    case Kind::Enum:
      return enumeration->name;
    case Kind::Schema:
      return schema->name;
  }
  return "?";
}

const FieldDef* SchemaDef::field(const std::string& name) const {
  for (const FieldDef& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::vector<std::string> SchemaDef::field_names() const {
  std::vector<std::string> names;
  for (const FieldDef& f : fields) names.push_back(f.name);
  return names;
}

bool EnumDef::has(const std::string& member) const {
  for (const std::string& m : members) {
    if (m == member) return true;
  }
  return false;
}

const SchemaDef* TypeRegistry::schema(const std::string& name) const {
  auto it = schemas.find(name);
  return it == schemas.end() ? nullptr : &it->second;
}

std::unique_ptr<TypeRegistry> load_types(SourceManager& sources, Diagnostics& diagnostics) {
  auto registry = std::make_unique<TypeRegistry>();
  std::vector<std::pair<FileId, const ast::File*>> parsed;
  // First pass: every name, so fields may use types declared later or in other files.
  for (std::size_t i = 0; i < kSchemaFiles_count; ++i) {
    const EmbeddedFile& embedded = kSchemaFiles[i];
    FileId file = sources.add("schema/" + std::string(embedded.path), std::string(embedded.bytes));
    registry->files.push_back(std::make_unique<ast::File>(
        parse::parse_file(file, sources.file(file).text(), diagnostics)));
    parsed.emplace_back(file, registry->files.back().get());
    for (const ast::Item& item : registry->files.back()->items) {
      if (const auto* schema = boost::get<ast::Schema>(&item)) {
        SchemaDef& def = registry->schemas[schema->name.name];
        def.name = schema->name.name;
        def.doc = schema->doc;
        def.range = {file, schema->begin, schema->end};
        for (const char* kind : kDeclarationKinds) def.is_kind |= def.name == kind;
      } else if (const auto* enumeration = boost::get<ast::Enum>(&item)) {
        EnumDef& def = registry->enums[enumeration->name.name];
        def.name = enumeration->name.name;
        def.range = {file, enumeration->begin, enumeration->end};
        for (const ast::Identifier& m : enumeration->members) def.members.push_back(m.name);
      }
    }
  }
  for (const auto& [file, tree] : parsed) {
    TypeBuilder builder{*registry, diagnostics, file};
    for (const ast::Item& item : tree->items) {
      const auto* schema = boost::get<ast::Schema>(&item);
      if (!schema) continue;
      SchemaDef& def = registry->schemas[schema->name.name];
      for (const ast::Field& field : schema->fields) {
        FieldDef f;
        f.name = field.name.name;
        f.optional = field.optional;
        f.type = builder.build(field.type);
        f.default_value = field.default_value ? &*field.default_value : nullptr;
        f.doc = field.doc;
        f.range = {file, field.begin, field.end};
        def.fields.push_back(std::move(f));
      }
    }
  }
  return registry;
}

bool is_dns_label(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

}  // namespace mlenv::check
