#include "compiler/lsp/completion.h"

#include <algorithm>
#include <cctype>
#include <memory>

#include "compiler/base/embedded.h"
#include "compiler/check/platform_rules.h"
#include "compiler/parse/parser.h"
#include "targets/provider.h"

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

// The value of the entry that sets `key` in `at` or an ancestor, or nullptr.
const ast::Expr* set_value(const ProgramView& view, const DeclAt& at, const char* key) {
  auto set = view.setter(at, {key}, true);
  return set ? &set->second->value : nullptr;
}

// The platform of the cluster a declaration runs on, through `extends`: a cluster's own
// `platform` (the schema's default, openshift, where none sets it), an env's cluster's; "" where
// it cannot be told (an inline cluster, a name that does not resolve).
std::string platform_of(const ProgramView& view, const DeclAt& at) {
  const bool cluster = at.decl->kind.name == "cluster";
  if (!cluster && at.decl->kind.name != "env") return "";
  const ast::Expr* value = set_value(view, at, cluster ? "platform" : "cluster");
  if (!value) return cluster ? ir::platform_name(ir::Platform::openshift) : "";
  const auto* ref = boost::get<ast::Ref>(value);
  if (!ref) return "";
  if (cluster) return ref->path.size() == 1 ? ref->path[0] : "";
  std::size_t consumed = 0;
  std::optional<DeclAt> named = view.resolve(*at.file, *ref, "cluster", consumed);
  if (!named || consumed != ref->path.size() || named->decl->kind.name != "cluster") return "";
  return platform_of(view, *named);
}

// Whether the field at `path` below an env (`on_env`) or a cluster is one `platform` does not
// have (E0418): one only other platforms have, or a pod's field on a platform of hosts.
bool foreign_field(bool on_env, const std::vector<std::string>& path, const std::string& platform) {
  auto same = [&](const check::PlatformField& field) {
    return field.on_env == on_env &&
           std::equal(path.begin(), path.end(), field.path.begin(), field.path.end());
  };
  bool listed = false, ours = false, on_hosts = false;
  for (const check::PlatformRules* rules : target::check_rules()) {
    const bool this_one = platform == ir::platform_name(rules->platform());
    on_hosts = on_hosts || (this_one && rules->on_hosts());
    for (const check::PlatformField& field : rules->fields()) {
      if (!same(field)) continue;
      listed = true;
      ours = ours || this_one;
    }
  }
  if (listed && !ours) return true;
  // An env on the hosts (Slurm, local) has no place for a pod's fields either.
  const std::vector<check::PlatformField> host = check::host_fields();
  return on_hosts && std::any_of(host.begin(), host.end(), same);
}

// What the blanked document says of the declaration around the cursor.
struct Around {
  bool in_declaration = false;
  std::string kind;      ///< the declaration's kind, "" outside one
  std::string platform;  ///< its cluster's platform, "" when unknown or not asked
};

// The block around `offset` in `text` parsed with the line [line_start, line_end) blanked, and
// (with `view` and `root`) the platform the declaration around it runs on.
Cursor block_at(std::string_view text, std::size_t line_start, std::size_t line_end,
                std::uint32_t offset, const check::TypeRegistry& types, Around& around,
                const ProgramView* view = nullptr, const check::LoadedFile* root = nullptr) {
  std::string blanked(text);
  for (std::size_t i = line_start; i < line_end; ++i) blanked[i] = ' ';
  SourceManager sources;
  Diagnostics diagnostics;
  FileId file = sources.add("completion", blanked);
  auto tree =
      std::make_shared<ast::File>(parse::parse_file(file, sources.file(file).text(), diagnostics));
  Cursor cursor = locate(*tree, offset, types);
  around.in_declaration = cursor.decl != nullptr;
  if (cursor.decl) around.kind = cursor.decl->kind.name;
  if (view && root && cursor.decl) {
    // The blanked text stands for the document: its names resolve through the check's imports.
    const check::LoadedFile current{root->path, root->file, tree, root->imports};
    around.platform = platform_of(*view, DeclAt{&current, cursor.decl});
  }
  // These point into `tree`, which dies here; the types point into `types`, which lives on.
  cursor.ref = nullptr;
  cursor.import = nullptr;
  cursor.decl = nullptr;
  return cursor;
}

// The closers of the brackets `typed` leaves open, innermost first (strings skipped).
std::string closers(std::string_view typed) {
  std::string open;
  bool in_string = false;
  for (std::size_t i = 0; i < typed.size(); ++i) {
    char c = typed[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      open += c;
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    }
  }
  std::string out;
  for (auto it = open.rbegin(); it != open.rend(); ++it) out += *it == '[' ? " ]" : " }";
  return out;
}

// Where an item of a list, or an entry of a block in a list, is being typed on the line
// (`services = [vscode, |`, `rails = [{ dev|`): the text parsed with the word blanked and the
// brackets the line leaves open closed at its end.
Cursor item_at(std::string_view text, std::size_t line_start, std::size_t word_start,
               std::uint32_t offset, std::size_t line_end, const check::TypeRegistry& types) {
  std::string closed(text.substr(0, word_start));
  closed.append(offset - word_start, ' ');
  closed += text.substr(offset, line_end - offset);
  closed += closers(text.substr(line_start, line_end - line_start));
  closed += text.substr(line_end);
  SourceManager sources;
  Diagnostics diagnostics;
  FileId file = sources.add("completion", closed);
  ast::File tree = parse::parse_file(file, sources.file(file).text(), diagnostics);
  Cursor cursor = locate(tree, offset, types);
  cursor.ref = nullptr;  // they point into `tree`, which dies here
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

// The fields of the block around the cursor; in a declaration of kind `kind` whose cluster's
// platform is known, without those that platform does not have.
Json fields(const Cursor& cursor, const std::string& kind = "", const std::string& platform = "") {
  Json items = Json::array();
  if (!cursor.block_schema) return items;
  // An env's inline `cluster { }` holds cluster fields.
  const bool inline_cluster = kind == "env" && !cursor.keys.empty() && cursor.keys[0] == "cluster";
  const bool on_env = kind == "env" && !inline_cluster;
  std::vector<std::string> path(cursor.keys.begin() + (inline_cluster ? 1 : 0), cursor.keys.end());
  for (const check::FieldDef& field : cursor.block_schema->fields) {
    path.push_back(field.name);
    const bool foreign = !platform.empty() && (kind == "env" || kind == "cluster") &&
                         foreign_field(on_env, path, platform);
    path.pop_back();
    if (!foreign) items.push(item(field.name, kField, field.type.describe(), field.doc));
  }
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
    Around around;
    Cursor cursor = block_at(text, line_start, line_end, offset, types, around);
    return values(value_type(cursor, std::string(key)), view, root);
  }
  // An item of a list, or an entry of a block in one, on the line that opened it.
  if (!before.empty() && (before.back() == '[' || before.back() == ',' || before.back() == '{')) {
    std::size_t word_start = offset - (typed.size() - word);
    Cursor cursor = item_at(text, line_start, word_start, offset, line_end, types);
    return cursor.list_element ? values(cursor.list_element, view, root) : fields(cursor);
  }
  // A word alone on its line: a field of the block around it, an item of the list around it,
  // or a top-level keyword.
  if (before.empty() || before == "final") {
    Around around;
    Cursor cursor = block_at(text, line_start, line_end, offset, types, around, &view, root);
    if (cursor.list_element) return values(cursor.list_element, view, root);
    if (!around.in_declaration && before.empty()) return top_level();
    return fields(cursor, around.kind, around.platform);
  }
  return Json::array();
}

}  // namespace mlenv::lsp
