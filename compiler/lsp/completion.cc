#include "compiler/lsp/completion.h"

#include <cctype>

#include "compiler/base/embedded.h"
#include "compiler/parse/parser.h"

namespace mlenv::lsp {
namespace {

using boot::Json;

// CompletionItemKind values of the protocol.
constexpr int kField = 5, kKeyword = 14, kFile = 17, kReference = 18, kEnumMember = 20;

bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Json item(const std::string& label, int kind, const std::string& detail = "",
          const std::string& documentation = "") {
  Json out = Json::object().set("label", label).set("kind", kind);
  if (!detail.empty()) out.set("detail", detail);
  if (!documentation.empty())
    out.set("documentation", Json::object().set("kind", "markdown").set("value", documentation));
  return out;
}

// The block around `offset` in `text` parsed with the line [line_start, line_end) blanked;
// `in_declaration` says whether the offset lies in some declaration at all.
Cursor block_at(std::string_view text, std::size_t line_start, std::size_t line_end,
                std::uint32_t offset, const check::TypeRegistry& types, bool& in_declaration) {
  std::string blanked(text);
  for (std::size_t i = line_start; i < line_end; ++i) blanked[i] = ' ';
  SourceManager sources;
  Diagnostics diagnostics;
  FileId file = sources.add("completion", blanked);
  ast::File tree = parse::parse_file(file, sources.file(file).text(), diagnostics);
  Cursor cursor = locate(tree, offset, types);
  in_declaration = cursor.decl != nullptr;
  // These point into `tree`, which dies here; the types point into `types`, which lives on.
  cursor.ref = nullptr;
  cursor.import = nullptr;
  cursor.decl = nullptr;
  return cursor;
}

// The type of the value written after `key =` in the block `cursor` is in.
const check::Type* value_type(const Cursor& cursor, const std::string& key) {
  if (cursor.block_element) return cursor.block_element;
  const check::FieldDef* field = cursor.block_schema ? cursor.block_schema->field(key) : nullptr;
  if (!field) return nullptr;
  const check::Type* type = &field->type;
  if (type->kind == check::Type::Kind::List) type = type->element.get();
  return type;
}

Json values(const check::Type* type, const ProgramView& view, const check::LoadedFile* root) {
  Json items = Json::array();
  if (!type) return items;
  using Kind = check::Type::Kind;
  if (type->kind == Kind::Enum) {
    for (const std::string& member : type->enumeration->members)
      items.push(item(member, kEnumMember, type->enumeration->name));
  } else if (type->kind == Kind::Bool) {
    items.push(item("true", kKeyword)).push(item("false", kKeyword));
  } else if (type->kind == Kind::Schema && type->schema->is_kind && root) {
    for (const auto& [name, at] : view.names(*root, type->schema->name))
      items.push(item(name, kReference, at.decl->kind.name, at.decl->doc));
  }
  return items;
}

Json fields(const Cursor& cursor) {
  Json items = Json::array();
  if (!cursor.block_schema) return items;
  for (const check::FieldDef& field : cursor.block_schema->fields)
    items.push(item(field.name, kField, field.type.describe(), field.doc));
  return items;
}

Json top_level() {
  Json items = Json::array();
  items.push(item("import", kKeyword));
  for (const char* kind : check::kDeclarationKinds) items.push(item(kind, kKeyword));
  return items;
}

}  // namespace

Json complete(std::string_view text, std::uint32_t offset, const ProgramView& view,
              const check::LoadedFile* root, const check::TypeRegistry& types) {
  offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(text.size()));
  std::size_t line_start = offset == 0 ? 0 : text.rfind('\n', offset - 1);
  line_start = line_start == std::string_view::npos || offset == 0 ? 0 : line_start + 1;
  std::size_t line_end = text.find('\n', offset);
  if (line_end == std::string_view::npos) line_end = text.size();
  std::string_view typed = trim_left(text.substr(line_start, offset - line_start));

  // `import "std/pro|`: the stdlib's files.
  if (typed.substr(0, 6) == "import" && typed.find('"') != std::string_view::npos &&
      typed.find('"') == typed.rfind('"')) {
    Json items = Json::array();
    for (std::size_t i = 0; i < kStdlibFiles_count; ++i) {
      std::string path(kStdlibFiles[i].path);
      items.push(item(path.substr(0, path.size() - 6), kFile));  // without `.mlenv`
    }
    return items;
  }
  // The word being typed, and what precedes it on the line.
  std::size_t word = typed.size();
  while (word > 0 && is_word(typed[word - 1])) --word;
  std::string_view before = trim_right(typed.substr(0, word));

  // `KIND NAME extends |`: declarations of that kind.
  if (before.size() > 8 && before.substr(before.size() - 8) == " extends") {
    std::string kind(before.substr(0, before.find(' ')));
    Json items = Json::array();
    if (!root) return items;
    for (const auto& [name, at] : view.names(*root, kind))
      items.push(item(name, kReference, at.decl->kind.name, at.decl->doc));
    return items;
  }
  // `key = |` or `key += |`: the values of the field's type.
  if (!before.empty() && before.back() == '=') {
    std::string_view key = trim_right(before.substr(0, before.size() - 1));
    if (!key.empty() && key.back() == '+') key = trim_right(key.substr(0, key.size() - 1));
    if (key.substr(0, 6) == "final ") key = trim_left(key.substr(6));
    if (key.size() >= 2 && key.front() == '"' && key.back() == '"')
      key = key.substr(1, key.size() - 2);
    bool in_declaration = false;
    Cursor cursor = block_at(text, line_start, line_end, offset, types, in_declaration);
    return values(value_type(cursor, std::string(key)), view, root);
  }
  // A word alone on its line: a field of the block around it, or a top-level keyword.
  if (before.empty() || before == "final") {
    bool in_declaration = false;
    Cursor cursor = block_at(text, line_start, line_end, offset, types, in_declaration);
    return in_declaration || !before.empty() ? fields(cursor) : top_level();
  }
  return Json::array();
}

}  // namespace mlenv::lsp
