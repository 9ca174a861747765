#include "compiler/lsp/navigation.h"

#include <algorithm>
#include <set>

namespace mlenv::lsp {
namespace {

constexpr std::size_t kMaxChain = 64;      // the checker's limit on `extends` links (E0104)
constexpr std::size_t kMaxInherited = 40;  // inherited fields listed in one hover

// Whether a cursor at `offset` touches `node` (its end too: the cursor after a word's last
// letter is on the word).
bool touches(const ast::Located& node, std::uint32_t offset) {
  return offset >= node.begin && offset <= node.end;
}

// The declaration kind a value of `type` references (`cluster`), or "".
std::string kind_of(const check::Type* type) {
  return type && type->kind == check::Type::Kind::Schema && type->schema->is_kind
             ? type->schema->name
             : "";
}

// The text of a plain string literal (an import path).
std::string plain_text(const ast::StringLit& literal) {
  std::string text;
  for (const auto& part : literal.parts) {
    if (const auto* chunk = boost::get<std::string>(&part)) text += *chunk;
  }
  return text;
}

// The entry that sets `keys` (from `i` on) in `block`: the last one, as later entries win.
const ast::Entry* find_entry(const ast::Block& block, const std::vector<std::string>& keys,
                             std::size_t i = 0) {
  const ast::Entry* found = nullptr;
  for (const ast::Entry& entry : block.entries) {
    if (entry.key.text != keys[i]) continue;
    if (i + 1 == keys.size()) {
      found = &entry;
    } else if (const auto* nested = boost::get<ast::Block>(&entry.value)) {
      if (const ast::Entry* inner = find_entry(*nested, keys, i + 1)) found = inner;
    }
  }
  return found;
}

std::string joined(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) out += (out.empty() ? "" : ".") + key;
  return out;
}

// Walks down the blocks around an offset, typing each entry by its schema.
struct Walker {
  const check::TypeRegistry& types;
  std::uint32_t offset;
  Cursor& cursor;

  void block(const ast::Block& body, const check::SchemaDef* schema, const check::Type* element) {
    if (offset <= body.begin || offset >= body.end) return;
    cursor.block_schema = schema;
    cursor.block_element = element;
    cursor.list_element = nullptr;
    for (const ast::Entry& entry : body.entries) {
      const check::FieldDef* field = schema ? schema->field(entry.key.text) : nullptr;
      const check::Type* type = element ? element : field ? &field->type : nullptr;
      if (touches(entry.key, offset)) {
        cursor.kind = Cursor::Kind::Key;
        cursor.keys.push_back(entry.key.text);
        cursor.field = field;
        cursor.type = type;
        return;
      }
      if (touches(ast::located(entry.value), offset)) {
        cursor.keys.push_back(entry.key.text);
        value(entry.value, type);
        return;
      }
    }
  }

  void value(const ast::Expr& expr, const check::Type* type) {
    using Kind = check::Type::Kind;
    if (const auto* nested = boost::get<ast::Block>(&expr)) {
      if (type && type->kind == Kind::Schema) return block(*nested, type->schema, nullptr);
      if (type && type->kind == Kind::Map) return block(*nested, nullptr, type->element.get());
      return block(*nested, nullptr, nullptr);
    }
    if (const auto* ref = boost::get<ast::Ref>(&expr)) {
      cursor.kind = Cursor::Kind::Ref;
      cursor.ref = ref;
      cursor.type = type;
    } else if (const auto* list = boost::get<ast::List>(&expr)) {
      const check::Type* element = type && type->kind == Kind::List ? type->element.get() : nullptr;
      for (const ast::Expr& item : list->items) {
        if (touches(ast::located(item), offset)) return value(item, element);
      }
      if (offset > list->begin && offset < list->end) cursor.list_element = element;
    } else if (const auto* text = boost::get<ast::StringLit>(&expr)) {
      for (const auto& part : text->parts) {
        const auto* interpolation = boost::get<ast::Interpolation>(&part);
        if (interpolation && touches(interpolation->ref, offset)) {
          cursor.kind = Cursor::Kind::Ref;
          cursor.ref = &interpolation->ref;
          cursor.type = nullptr;
        }
      }
    }
  }
};

}  // namespace

std::string qualifier_of(const ast::Import& import) {
  if (import.alias) return import.alias->name;
  std::string target = plain_text(import.path);
  target = target.substr(target.rfind('/') == std::string::npos ? 0 : target.rfind('/') + 1);
  if (target.size() > 6 && target.compare(target.size() - 6, 6, ".mlenv") == 0)
    target.resize(target.size() - 6);
  return target;
}

const ast::Decl* find_decl(const ast::File& tree, const std::string& name,
                           const std::string& kind) {
  const ast::Decl* any = nullptr;
  for (const ast::Item& item : tree.items) {
    const auto* decl = boost::get<ast::Decl>(&item);
    if (!decl || decl->name.name != name) continue;
    if (kind.empty() || decl->kind.name == kind) return decl;
    if (!any) any = decl;
  }
  return any;
}

Cursor locate(const ast::File& tree, std::uint32_t offset, const check::TypeRegistry& types) {
  Cursor cursor;
  for (const ast::Item& item : tree.items) {
    if (const auto* import = boost::get<ast::Import>(&item)) {
      if (touches(*import, offset)) {
        cursor.kind = Cursor::Kind::Import;
        cursor.import = import;
        return cursor;
      }
      continue;
    }
    const auto* decl = boost::get<ast::Decl>(&item);
    if (!decl || !touches(*decl, offset)) continue;
    cursor.decl = decl;
    if (touches(decl->kind, offset)) {
      cursor.kind = Cursor::Kind::DeclKind;
    } else if (touches(decl->name, offset)) {
      cursor.kind = Cursor::Kind::DeclName;
    } else if (decl->extends && touches(*decl->extends, offset)) {
      cursor.kind = Cursor::Kind::Extends;
      cursor.ref = &*decl->extends;
    } else {
      Walker{types, offset, cursor}.block(decl->body, types.schema(decl->kind.name), nullptr);
    }
    return cursor;
  }
  return cursor;
}

const check::LoadedFile* ProgramView::file(const std::string& path) const {
  for (const check::LoadedFile& loaded : index_.files) {
    if (loaded.path == path) return loaded.tree ? &loaded : nullptr;
  }
  return nullptr;
}

std::string_view ProgramView::text(const check::LoadedFile& file) const {
  return sources_.file(file.file).text();
}

std::optional<DeclAt> ProgramView::resolve(const check::LoadedFile& file, const ast::Ref& ref,
                                           const std::string& kind, std::size_t& consumed) const {
  if (ref.path.empty()) return std::nullopt;
  if (const ast::Decl* decl = find_decl(*file.tree, ref.path[0], kind)) {
    consumed = 1;
    return DeclAt{&file, decl};
  }
  auto import = file.imports.find(ref.path[0]);
  if (import == file.imports.end() || ref.path.size() < 2) return std::nullopt;
  const check::LoadedFile* imported = this->file(import->second);
  if (!imported) return std::nullopt;
  const ast::Decl* decl = find_decl(*imported->tree, ref.path[1], kind);
  if (!decl) return std::nullopt;
  consumed = 2;
  return DeclAt{imported, decl};
}

std::vector<DeclAt> ProgramView::ancestors(const DeclAt& at) const {
  std::vector<DeclAt> chain;
  std::set<const ast::Decl*> seen = {at.decl};
  DeclAt current = at;
  while (current.decl->extends && chain.size() < kMaxChain) {
    std::size_t consumed = 0;
    auto parent = resolve(*current.file, *current.decl->extends, current.decl->kind.name, consumed);
    if (!parent || !seen.insert(parent->decl).second) break;
    chain.push_back(*parent);
    current = *parent;
  }
  return chain;
}

std::optional<std::pair<DeclAt, const ast::Entry*>> ProgramView::setter(
    const DeclAt& at, const std::vector<std::string>& keys, bool include_self) const {
  if (keys.empty()) return std::nullopt;
  std::vector<DeclAt> chain = ancestors(at);
  if (include_self) chain.insert(chain.begin(), at);
  for (const DeclAt& link : chain) {
    if (const ast::Entry* entry = find_entry(link.decl->body, keys)) {
      return std::make_pair(link, entry);
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, DeclAt>> ProgramView::names(const check::LoadedFile& file,
                                                               const std::string& kind) const {
  std::vector<std::pair<std::string, DeclAt>> out;
  auto add = [&](const check::LoadedFile& from, const std::string& prefix) {
    for (const ast::Item& item : from.tree->items) {
      const auto* decl = boost::get<ast::Decl>(&item);
      if (decl && (kind.empty() || decl->kind.name == kind))
        out.emplace_back(prefix + decl->name.name, DeclAt{&from, decl});
    }
  };
  add(file, "");
  for (const auto& [qualifier, path] : file.imports) {
    if (const check::LoadedFile* imported = this->file(path)) add(*imported, qualifier + ".");
  }
  return out;
}

std::string ProgramView::where(const check::LoadedFile& file, std::uint32_t offset) const {
  return file.path + ":" + std::to_string(sources_.file(file.file).position(offset).line);
}

std::string ProgramView::excerpt(const check::LoadedFile& file, const ast::Expr& value) const {
  if (boost::get<ast::Block>(&value)) return "{ ... }";
  const ast::Located& at = ast::located(value);
  std::string_view source = text(file).substr(at.begin, at.end - at.begin);
  std::string out;
  for (char c : source) {
    bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  if (out.size() > 80) out = out.substr(0, 77) + "...";
  return out;
}

std::string ProgramView::hover_decl(const DeclAt& at) const {
  const ast::Decl& decl = *at.decl;
  std::string out = "```mlenv\n" + decl.kind.name + " " + decl.name.name;
  if (decl.extends) out += " extends " + joined(decl.extends->path);
  out += "\n```\n";
  if (!decl.doc.empty()) out += "\n" + decl.doc + "\n";
  out += "\nDeclared at `" + where(*at.file, decl.name.begin) + "`.\n";
  std::set<std::string> listed;
  for (const ast::Entry& entry : decl.body.entries) listed.insert(entry.key.text);
  std::string inherited;
  std::size_t count = 0;
  for (const DeclAt& parent : ancestors(at)) {
    for (const ast::Entry& entry : parent.decl->body.entries) {
      if (!listed.insert(entry.key.text).second || ++count > kMaxInherited) continue;
      inherited += "- `" + entry.key.text + (entry.op == ast::Op::Append ? " += " : " = ") +
                   excerpt(*parent.file, entry.value) + "` from `" + parent.decl->kind.name + " " +
                   parent.decl->name.name + "` (`" + where(*parent.file, entry.begin) + "`)\n";
    }
  }
  if (!inherited.empty()) out += "\nInherited through `extends`:\n\n" + inherited;
  return out;
}

std::string ProgramView::hover_key(const check::LoadedFile& file, const Cursor& cursor) const {
  std::string out = "**`" + joined(cursor.keys) + "`**";
  if (cursor.type) out += ": `" + cursor.type->describe() + "`";
  out += "\n";
  if (cursor.field && !cursor.field->doc.empty()) out += "\n" + cursor.field->doc + "\n";
  if (auto set = setter({&file, cursor.decl}, cursor.keys, false)) {
    const auto& [parent, entry] = *set;
    out += "\nOverrides `" + excerpt(*parent.file, entry->value) + "`, set by `" +
           parent.decl->kind.name + " " + parent.decl->name.name + "` (`" +
           where(*parent.file, entry->begin) + "`).\n";
  }
  return out;
}

std::string ProgramView::hover_ref(const check::LoadedFile& file, const Cursor& cursor) const {
  std::size_t consumed = 0;
  // `extends` names a declaration of the extending one's kind.
  std::string kind =
      cursor.kind == Cursor::Kind::Extends ? cursor.decl->kind.name : kind_of(cursor.type);
  auto at = resolve(file, *cursor.ref, kind, consumed);
  if (!at) return "";
  if (consumed == cursor.ref->path.size()) return hover_decl(*at);
  std::vector<std::string> rest(cursor.ref->path.begin() + static_cast<long>(consumed),
                                cursor.ref->path.end());
  auto set = setter(*at, rest, true);
  if (!set) return "`" + joined(cursor.ref->path) + "`: not set in the declaration or its chain";
  const auto& [owner, entry] = *set;
  return "`" + joined(cursor.ref->path) + " = " + excerpt(*owner.file, entry->value) +
         "`\n\nSet by `" + owner.decl->kind.name + " " + owner.decl->name.name + "` (`" +
         where(*owner.file, entry->begin) + "`).\n";
}

std::string ProgramView::hover(const std::string& path, std::uint32_t offset) const {
  const check::LoadedFile* loaded = file(path);
  if (!loaded) return "";
  Cursor cursor = locate(*loaded->tree, offset, types_);
  switch (cursor.kind) {
    case Cursor::Kind::Import: {
      auto it = loaded->imports.find(qualifier_of(*cursor.import));
      return it == loaded->imports.end() ? ""
                                         : "Imports `" + it->second + "` as `" + it->first + "`.";
    }
    case Cursor::Kind::DeclKind: {
      const check::SchemaDef* schema = types_.schema(cursor.decl->kind.name);
      return schema ? "**`" + schema->name + "`** (a declaration kind)\n\n" + schema->doc : "";
    }
    case Cursor::Kind::DeclName:
      return hover_decl({loaded, cursor.decl});
    case Cursor::Kind::Key:
      return hover_key(*loaded, cursor);
    case Cursor::Kind::Extends:
    case Cursor::Kind::Ref:
      return hover_ref(*loaded, cursor);
    case Cursor::Kind::None:
      break;
  }
  return "";
}

std::optional<ProgramView::Target> ProgramView::definition(const std::string& path,
                                                           std::uint32_t offset) const {
  const check::LoadedFile* loaded = file(path);
  if (!loaded) return std::nullopt;
  Cursor cursor = locate(*loaded->tree, offset, types_);
  if (cursor.kind == Cursor::Kind::Import) {
    auto it = loaded->imports.find(qualifier_of(*cursor.import));
    if (it == loaded->imports.end()) return std::nullopt;
    return Target{it->second, 0, 0};
  }
  if (cursor.kind == Cursor::Kind::Key) {
    auto set = setter({loaded, cursor.decl}, cursor.keys, false);
    if (!set) return std::nullopt;
    return Target{set->first.file->path, set->second->key.begin, set->second->key.end};
  }
  if (cursor.kind != Cursor::Kind::Ref && cursor.kind != Cursor::Kind::Extends) return std::nullopt;
  std::size_t consumed = 0;
  std::string kind =
      cursor.kind == Cursor::Kind::Extends ? cursor.decl->kind.name : kind_of(cursor.type);
  auto at = resolve(*loaded, *cursor.ref, kind, consumed);
  if (!at) return std::nullopt;
  if (consumed < cursor.ref->path.size()) {
    std::vector<std::string> rest(cursor.ref->path.begin() + static_cast<long>(consumed),
                                  cursor.ref->path.end());
    if (auto set = setter(*at, rest, true))
      return Target{set->first.file->path, set->second->key.begin, set->second->key.end};
  }
  return Target{at->file->path, at->decl->name.begin, at->decl->name.end};
}

}  // namespace mlenv::lsp
