// Evaluating declarations: `extends` chains, recursive block merging, `+=`, `final`, typed
// values, references and interpolation.

#include <algorithm>
#include <charconv>

#include "compiler/base/duration.h"
#include "compiler/base/limits.h"
#include "compiler/base/quantity.h"
#include "compiler/check/checker.h"

namespace mlenv::check {
namespace {

// "a cluster", "an image", "an env": the kinds in running text.
std::string article(const std::string& noun) {
  bool vowel =
      !noun.empty() && std::string_view("aeiou").find(noun.front()) != std::string_view::npos;
  return (vowel ? "an " : "a ") + noun;
}

const char* kind_word(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::String:
      return "string";
    case Value::Kind::Int:
      return "int";
    case Value::Kind::Bool:
      return "bool";
    case Value::Kind::Quantity:
      return "quantity";
    case Value::Kind::Duration:
      return "duration";
    case Value::Kind::Enum:
      return "enum member";
    case Value::Kind::List:
      return "list";
    case Value::Kind::Block:
      return "block";
  }
  return "value";
}

bool is_scalar(Value::Kind kind) {
  return kind != Value::Kind::List && kind != Value::Kind::Block;
}

// The value kind a type's values have.
Value::Kind value_kind(const Type& type) {
  switch (type.kind) {
    case Type::Kind::String:
    case Type::Kind::Name:
      return Value::Kind::String;
    case Type::Kind::Int:
    case Type::Kind::Port:
      return Value::Kind::Int;
    case Type::Kind::Bool:
      return Value::Kind::Bool;
    case Type::Kind::Quantity:
      return Value::Kind::Quantity;
    case Type::Kind::Duration:
      return Value::Kind::Duration;
    case Type::Kind::Enum:
      return Value::Kind::Enum;
    case Type::Kind::List:
      return Value::Kind::List;
    case Type::Kind::Map:
    case Type::Kind::Schema:
      return Value::Kind::Block;
  }
  return Value::Kind::String;
}

bool has_final(const Value& value, SourceRange& where) {
  for (const Slot& s : value.slots) {
    if (s.final_at.valid()) {
      where = s.final_at;
      return true;
    }
    if (has_final(*s.value, where)) return true;
  }
  return false;
}

// "`gpus` has: per_node, resource, product, memory", for a field with no near name.
std::string field_list(const SchemaDef& schema) {
  std::string list;
  for (const std::string& name : schema.field_names()) list += (list.empty() ? "" : ", ") + name;
  return "`" + schema.name + "` has: " + list;
}

}  // namespace

Checker::Checker(const FileSystem& files, SourceManager& sources, Diagnostics& diagnostics,
                 const TypeRegistry& types, const PlatformRulesList& platforms,
                 const ImportSources& imports)
    : files_(files),
      sources_(sources),
      diagnostics_(diagnostics),
      types_(types),
      platforms_(platforms),
      platform_fields_(platforms),
      site_(imports.site),
      git_(imports.git) {
  schema_module_.phase = Module::Phase::Loaded;
}

ValuePtr Checker::eval_decl(DeclState& state, bool via_extends, SourceRange from) {
  in_interpolation_ = false;  // an interpolation's name is resolved before its declaration
  if (state.phase == DeclState::Phase::Done) return state.value;
  Module& module = *state.module;
  const ast::Decl& decl = *state.decl;
  if (state.phase == DeclState::Phase::InProgress) {
    std::vector<std::string> cycle;
    auto start = std::find(eval_stack_.begin(), eval_stack_.end(), &state);
    for (auto it = start; it != eval_stack_.end(); ++it) cycle.push_back((*it)->decl->name.name);
    cycle.push_back(decl.name.name);
    diagnostics_.report(
        via_extends ? Code::E0206 : Code::E0209, from,
        std::string(via_extends ? "extends" : "reference") + " cycle: " + join_cycle(cycle));
    return nullptr;
  }
  if (!state.schema) return nullptr;
  if (eval_stack_.size() >= limits::kMaxExtendsChain) {
    diagnostics_.report(Code::E0104, from,
                        "declarations nest more than " + std::to_string(limits::kMaxExtendsChain) +
                            " deep through `extends` and references");
    return nullptr;
  }
  state.phase = DeclState::Phase::InProgress;
  eval_stack_.push_back(&state);
  std::size_t errors = diagnostics_.error_count() + silent_failures_;

  ValuePtr value;
  if (decl.extends) {
    std::size_t consumed = 0;
    if (DeclState* parent = resolve_decl(module, *decl.extends, consumed, state.schema)) {
      if (consumed != decl.extends->path.size()) {
        Diagnostic& d = diagnostics_.report(Code::E0207, module.at(*decl.extends),
                                            "`extends` names a declaration, not a field");
        // `cluster h200 extends h200.node8`: the file's own `h200` hides the import's.
        const std::string& head = decl.extends->path[0];
        if (module.imports.count(head)) {
          d.label = "`" + head + "` here is this file's " + parent->decl->kind.name +
                    ", which hides the import `" + head + "`";
          d.notes.push_back({"rename the " + parent->decl->kind.name + ", or import with `as`",
                             module.at(parent->decl->name)});
        }
      } else if (parent->schema != state.schema) {
        Diagnostic& d =
            diagnostics_.report(Code::E0207, module.at(*decl.extends),
                                article(decl.kind.name) + " cannot extend the " +
                                    parent->decl->kind.name + " `" + parent->decl->name.name + "`");
        d.notes.push_back({"declared here", parent->module->at(parent->decl->name)});
      } else if (ValuePtr base = eval_decl(*parent, true, module.at(*decl.extends))) {
        value = copy_value(*base, module.at(*decl.extends));
      }
    }
  }
  if (!value) {
    value = std::make_shared<Value>();
    value->kind = Value::Kind::Block;
    value->schema = state.schema;
    if (decl.extends && module.failed_imports.count(decl.extends->path.front())) {
      // The parent is in a file that could not be read (E0201 says so): any field may have
      // come from it, so none is reported missing, and the rules of envs using it stay silent.
      value->failed_fields = state.schema->field_names();
      value->had_errors = true;
    }
  }
  value->decl = decl.name.name;
  value->decl_range = module.at(decl.name);
  value->range = module.at(decl);
  apply_block(*value, decl.body, state.schema, nullptr, module, 0);

  eval_stack_.pop_back();
  state.had_errors = diagnostics_.error_count() + silent_failures_ != errors;
  value->had_errors = value->had_errors || state.had_errors;  // a clone keeps its parent's
  state.phase = DeclState::Phase::Done;
  state.value = value;
  return value;
}

void Checker::apply_block(Value& target, const ast::Block& block, const SchemaDef* schema,
                          const Type* map_element, Module& module, std::size_t depth) {
  std::map<std::string, SourceRange> assigned_here;
  for (const ast::Entry& entry : block.entries) {
    const std::string& name = entry.key.text;
    SourceRange key_range = module.at(entry.key);
    if (auto previous = assigned_here.find(name); previous != assigned_here.end()) {
      Diagnostic& d = diagnostics_.report(Code::E0310, key_range,
                                          "`" + name + "` is assigned twice in this block");
      d.notes.push_back({"first assigned here", previous->second});
      continue;
    }
    assigned_here[name] = key_range;

    const Type* type = map_element;
    if (schema) {
      const FieldDef* field = schema->field(name);
      if (!field) {
        std::string hint = closest_name(name, schema->field_names());
        Diagnostic& d = diagnostics_.report(
            Code::E0302, key_range, "unknown field `" + name + "` in `" + schema->name + "`",
            hint.empty() ? "" : "did you mean `" + hint + "`?");
        if (hint.empty()) d.notes.push_back({field_list(*schema), {}});
        d.notes.push_back({"`" + schema->name + "` is defined in schema", schema->range});
        continue;
      }
      type = &field->type;
    }

    Slot* existing = target.slot(name);
    if (existing && existing->final_at.valid()) {
      Diagnostic& d =
          diagnostics_.report(Code::E0308, key_range,
                              "`" + name + "` is final and cannot be assigned", "assigned here");
      d.notes.push_back({"marked final here", existing->final_at});
      continue;
    }
    const auto* literal_block = boost::get<ast::Block>(&entry.value);
    bool mergeable = literal_block && existing && existing->value->kind == Value::Kind::Block &&
                     (type->kind == Type::Kind::Schema || type->kind == Type::Kind::Map);
    // `+=` appends to a list or merges into a block; on anything else it is a mistake, whether
    // or not the field has a value yet (where it has none, `+=` would silently act as `=`).
    const bool appendable = type->kind == Type::Kind::List || type->kind == Type::Kind::Schema ||
                            type->kind == Type::Kind::Map;
    if (entry.op == ast::Op::Append &&
        (existing ? !mergeable && type->kind != Type::Kind::List : !appendable)) {
      diagnostics_.report(
          Code::E0309, key_range,
          "`+=` needs a list or a block, and `" + name + "` is " + type->describe());
      continue;
    }
    if (entry.op == ast::Op::Append && existing && !mergeable) {
      ValuePtr more = eval_expr(entry.value, *type, module, depth + 1);
      if (!more) {
        target.mark_failed(name);
        continue;
      }
      if (existing->value->items.size() + more->items.size() > limits::kMaxListLength) {
        // Reported where a chain first crosses the limit, not again at every link after it.
        if (target.had_errors) {
          ++silent_failures_;
        } else {
          diagnostics_.report(Code::E0104, module.at(ast::located(entry.value)),
                              "list longer than " + std::to_string(limits::kMaxListLength));
        }
        continue;
      }
      // The child's list shares its parent's items (ValueList): an `extends` chain whose links
      // each append writes each item once.
      if (!spend(existing->value->items.append_cost(more->items.size()) * sizeof(ValuePtr),
                 module.at(ast::located(entry.value)))) {
        continue;
      }
      unshare(existing->value).items.append(more->items);
      existing->assigned = key_range;
    } else if (mergeable) {
      if (!spend(existing->value->slots.size() * sizeof(Slot), key_range)) continue;
      apply_block(unshare(existing->value), *literal_block,
                  type->kind == Type::Kind::Schema ? type->schema : nullptr,
                  type->kind == Type::Kind::Map ? type->element.get() : nullptr, module, depth + 1);
      existing->assigned = key_range;
    } else {
      SourceRange locked;
      if (existing && has_final(*existing->value, locked)) {
        Diagnostic& d = diagnostics_.report(
            Code::E0308, key_range, "`" + name + "` holds a final field and cannot be replaced",
            "replaced here; assign its other fields in a block instead");
        d.notes.push_back({"marked final here", locked});
        continue;
      }
      ValuePtr value = eval_expr(entry.value, *type, module, depth + 1);
      if (!value) {
        target.mark_failed(name);
        continue;
      }
      if (existing) {
        existing->value = value;
        existing->assigned = key_range;
      } else {
        target.slots.push_back({name, value, key_range, {}});
        existing = &target.slots.back();
      }
    }
    if (entry.is_final) existing->final_at = key_range;
  }
}

ValuePtr Checker::eval_expr(const ast::Expr& expr, const Type& type, Module& module,
                            std::size_t depth) {
  SourceRange range = module.at(ast::located(expr));
  auto mismatch = [&](const std::string& found, std::string label = {}) -> ValuePtr {
    diagnostics_.report(Code::E0301, range, "expected " + type.describe() + ", found " + found,
                        std::move(label));
    return nullptr;
  };
  if (depth > limits::kMaxNestingDepth) {
    diagnostics_.report(Code::E0104, range, "values nest too deeply");
    return nullptr;
  }
  if (const auto* s = boost::get<ast::StringLit>(&expr)) return eval_string(*s, type, module);
  if (const auto* n = boost::get<ast::Number>(&expr)) return eval_number(*n, type, module);
  if (const auto* r = boost::get<ast::Ref>(&expr)) return eval_ref(*r, type, module);
  if (const auto* b = boost::get<ast::Bool>(&expr)) {
    if (type.kind != Type::Kind::Bool) return mismatch(b->value ? "`true`" : "`false`");
    auto v = std::make_shared<Value>();
    v->kind = Value::Kind::Bool;
    v->number = b->value;
    v->range = range;
    return v;
  }
  if (const auto* list = boost::get<ast::List>(&expr)) {
    if (type.kind != Type::Kind::List) return mismatch("a list");
    if (list->items.size() > limits::kMaxListLength) {
      diagnostics_.report(Code::E0104, range,
                          "list longer than " + std::to_string(limits::kMaxListLength));
      return nullptr;
    }
    auto v = std::make_shared<Value>();
    v->kind = Value::Kind::List;
    v->range = range;
    bool ok = true;
    for (const ast::Expr& item : list->items) {
      if (ValuePtr element = eval_expr(item, *type.element, module, depth + 1)) {
        v->items.push_back(element);
      } else {
        ok = false;
      }
    }
    return ok ? v : nullptr;
  }
  const auto& block = boost::get<ast::Block>(expr);
  if (type.kind != Type::Kind::Schema && type.kind != Type::Kind::Map) return mismatch("a block");
  auto v = std::make_shared<Value>();
  v->kind = Value::Kind::Block;
  v->range = range;
  v->schema = type.schema;
  std::size_t errors = diagnostics_.error_count();
  apply_block(*v, block, type.schema, type.kind == Type::Kind::Map ? type.element.get() : nullptr,
              module, depth + 1);
  return diagnostics_.error_count() == errors ? v : nullptr;
}

ValuePtr Checker::eval_string(const ast::StringLit& literal, const Type& type, Module& module) {
  SourceRange range = module.at(literal);
  if (type.kind != Type::Kind::String && type.kind != Type::Kind::Name) {
    std::string hint;
    if (type.kind == Type::Kind::Enum || type.kind == Type::Kind::Schema) {
      hint = "write the name without quotes";
    } else if (type.kind == Type::Kind::Int || type.kind == Type::Kind::Quantity ||
               type.kind == Type::Kind::Duration) {
      hint = "write the number without quotes";
    }
    diagnostics_.report(Code::E0301, range, "expected " + type.describe() + ", found string", hint);
    return nullptr;
  }
  auto v = std::make_shared<Value>();
  v->kind = Value::Kind::String;
  v->range = range;
  for (const auto& part : literal.parts) {
    if (const auto* text = boost::get<std::string>(&part)) {
      v->text += *text;
      continue;
    }
    const auto& interpolation = boost::get<ast::Interpolation>(part);
    in_interpolation_ = true;
    const Value* read = read_value(module, interpolation.ref);
    in_interpolation_ = false;
    if (!read) return nullptr;
    if (!is_scalar(read->kind)) {
      diagnostics_.report(Code::E0311, module.at(interpolation),
                          "cannot interpolate " + article(kind_word(read->kind)),
                          "this reads " + article(kind_word(read->kind)));
      return nullptr;
    }
    v->text += read->kind == Value::Kind::Int    ? std::to_string(read->number)
               : read->kind == Value::Kind::Bool ? (read->number ? "true" : "false")
                                                 : read->text;
    if (v->text.size() > limits::kMaxStringBytes) break;  // reported below, before it grows
  }
  if (v->text.size() > limits::kMaxStringBytes) {
    diagnostics_.report(Code::E0104, range, "string longer than the limit");
    return nullptr;
  }
  if (!spend(v->text.size(), range)) return nullptr;
  return check_scalar(*v, type, range) ? v : nullptr;
}

bool Checker::check_scalar(Value& v, const Type& type, SourceRange range) {
  if (type.kind == Type::Kind::Name && !is_dns_label(v.text)) {
    diagnostics_.report(
        Code::E0305, range, "`" + v.text + "` is not a valid name",
        "lower-case letters, digits and `-`, at most 63, alphanumeric at both ends");
    return false;
  }
  if (type.pattern && !type.pattern->search(v.text)) {
    diagnostics_.report(Code::E0305, range, "`" + v.text + "` does not have the required form",
                        "expected " + type.pattern_words);
    return false;
  }
  if (v.kind == Value::Kind::Int &&
      ((type.low && v.number < *type.low) || (type.high && v.number > *type.high))) {
    diagnostics_.report(Code::E0304, range,
                        std::to_string(v.number) + " is out of range for " + type.describe());
    return false;
  }
  return true;
}

ValuePtr Checker::eval_number(const ast::Number& number, const Type& type, Module& module) {
  SourceRange range = module.at(number);
  const std::string& text = number.text;
  auto v = std::make_shared<Value>();
  v->range = range;
  bool integral = std::all_of(text.begin() + (text[0] == '-'), text.end(),
                              [](char c) { return c >= '0' && c <= '9'; });
  switch (type.kind) {
    case Type::Kind::Int:
    case Type::Kind::Port: {
      if (!integral) {
        diagnostics_.report(Code::E0301, range,
                            "expected " + type.describe() + ", found `" + text + "`");
        return nullptr;
      }
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v->number);
      if (error != std::errc() || end != text.data() + text.size()) {
        diagnostics_.report(Code::E0105, range, "`" + text + "` does not fit in an int");
        return nullptr;
      }
      v->kind = Value::Kind::Int;
      return check_scalar(*v, type, range) ? v : nullptr;
    }
    case Type::Kind::Quantity:
      if (!is_quantity(text)) {
        diagnostics_.report(Code::E0307, range, "`" + text + "` is not a quantity",
                            "for example 100Gi, 500m, 1.5, 2k");
        return nullptr;
      }
      v->kind = Value::Kind::Quantity;
      v->text = text;
      return v;
    case Type::Kind::Duration: {
      auto ms = parse_duration_ms(text);
      if (!ms) {
        diagnostics_.report(Code::E0307, range, "`" + text + "` is not a duration",
                            "for example 30s, 5m, 1h30m");
        return nullptr;
      }
      v->kind = Value::Kind::Duration;
      v->number = *ms;
      v->text = text;
      return v;
    }
    case Type::Kind::Enum:
      // NCCL also accepts GDR levels as numbers; accept them and name the level.
      if (type.enumeration->name == "gdr_level" && integral && text.size() == 1 && text[0] <= '5') {
        static const char* kLevels[] = {"LOC", "PIX", "PXB", "PHB", "SYS", "SYS"};
        v->kind = Value::Kind::Enum;
        v->text = kLevels[text[0] - '0'];
        diagnostics_.report(Code::W0401, range,
                            "GDR level " + text + " is written `" + v->text + "`",
                            "write `" + v->text + "`");
        return v;
      }
      [[fallthrough]];
    default:
      if (!integral && !is_quantity(text) && !parse_duration_ms(text)) {
        diagnostics_.report(Code::E0105, range, "`" + text + "` is not a valid number");
        return nullptr;
      }
      diagnostics_.report(Code::E0301, range,
                          "expected " + type.describe() + ", found number `" + text + "`",
                          type.kind == Type::Kind::String ? "write \"" + text + "\"" : "");
      return nullptr;
  }
}

DeclState* Checker::pick(const std::vector<DeclState*>& candidates, const SchemaDef* kind,
                         const std::string& name, SourceRange at) {
  if (candidates.size() == 1) return candidates[0];
  for (DeclState* state : candidates) {
    if (state->schema == kind) return state;
  }
  std::string kinds;
  for (DeclState* state : candidates)
    kinds += (kinds.empty() ? "" : " and ") + state->decl->kind.name;
  Diagnostic& d = diagnostics_.report(Code::E0205, at, "`" + name + "` names a " + kinds,
                                      "which one is meant here is ambiguous");
  for (DeclState* state : candidates) {
    d.notes.push_back({"the " + state->decl->kind.name + " `" + name + "`",
                       state->module->at(state->decl->name)});
  }
  return nullptr;
}

DeclState* Checker::resolve_decl(Module& module, const ast::Ref& ref, std::size_t& consumed,
                                 const SchemaDef* kind) {
  const std::string& head = ref.path[0];
  if (auto it = module.decls.find(head); it != module.decls.end()) {
    consumed = 1;
    return pick(it->second, kind, head, module.at(ref));
  }
  if (auto it = module.imports.find(head); it != module.imports.end()) {
    if (ref.path.size() < 2) {
      diagnostics_.report(Code::E0205, module.at(ref),
                          "`" + head + "` is an import; name one of its declarations",
                          "for example `" + head + ".NAME`");
      return nullptr;
    }
    Module& imported = *it->second;
    if (auto decl = imported.decls.find(ref.path[1]); decl != imported.decls.end()) {
      consumed = 2;
      return pick(decl->second, kind, ref.path[1], module.at(ref));
    }
    std::vector<std::string> names;
    if (diagnostics_.keeps_more()) {
      for (const auto& [name, states] : imported.decls) names.push_back(name);
    }
    std::string hint = closest_name(ref.path[1], names);
    diagnostics_.report(Code::E0205, module.at(ref),
                        "`" + imported.path + "` declares no `" + ref.path[1] + "`",
                        hint.empty() ? "" : "did you mean `" + head + "." + hint + "`?");
    return nullptr;
  }
  if (module.failed_imports.count(head)) {  // the import's E0201 says why
    ++silent_failures_;
    return nullptr;
  }
  // `site.lab.gpu` for `import "site/lab"`: an import is qualified by its last segment only.
  if (ref.path.size() >= 3 && module.imports.count(ref.path[1])) {
    std::string rest;
    for (std::size_t i = 1; i < ref.path.size(); ++i) rest += (i > 1 ? "." : "") + ref.path[i];
    Diagnostic& d = diagnostics_.report(Code::E0205, module.at(ref), "unknown name `" + head + "`",
                                        "did you mean `" + rest + "`?");
    d.notes.push_back({"an import is qualified by the last segment of its path (`" + ref.path[1] +
                           "`), or by its `as` name",
                       {}});
    return nullptr;
  }
  std::vector<std::string> names;
  std::string hint;
  // Hints only for diagnostics that will be shown: gathering every name is linear in the
  // declarations, and a file of unknown names must stay linear too.
  if (diagnostics_.keeps_more()) {
    for (const auto& [name, states] : module.decls) names.push_back(name);
    for (const auto& [qualifier, imported] : module.imports) {
      for (const auto& [name, states] : imported->decls) names.push_back(qualifier + "." + name);
      if (imported->decls.count(head)) hint = qualifier + "." + head;
    }
    if (hint.empty()) hint = closest_name(head, names);
  }
  Diagnostic& d = diagnostics_.report(Code::E0205, module.at(ref), "unknown name `" + head + "`",
                                      hint.empty() ? "" : "did you mean `" + hint + "`?");
  if (in_interpolation_) {
    d.notes.push_back(
        {"`${...}` reads a declaration of this program; a shell or Docker "
         "variable is written `\\${" +
             head + "}`",
         {}});
  }
  return nullptr;
}

ValuePtr Checker::field_default(const FieldDef& field) {
  if (!field.default_value) return nullptr;
  FileId file = field.range.file;
  schema_module_.file = file;
  return eval_expr(*field.default_value, field.type, schema_module_, 0);
}

const Value* Checker::read_value(Module& module, const ast::Ref& ref) {
  std::size_t consumed = 0;
  DeclState* state = resolve_decl(module, ref, consumed);
  if (!state) return nullptr;
  ValuePtr root = eval_decl(*state, false, module.at(ref));
  if (!root) return nullptr;
  const Value* value = root.get();
  std::string where = state->decl->name.name;
  for (std::size_t i = consumed; i < ref.path.size(); ++i) {
    const std::string& name = ref.path[i];
    const Slot* slot = value->kind == Value::Kind::Block ? value->slot(name) : nullptr;
    if (slot) {
      value = slot->value.get();
    } else {
      const FieldDef* field = value->schema ? value->schema->field(name) : nullptr;
      ValuePtr fallback = field ? field_default(*field) : nullptr;
      if (!fallback) {
        if (state->had_errors) return nullptr;  // already explained where it failed
        diagnostics_.report(Code::E0205, module.at(ref),
                            field ? "`" + where + "." + name + "` has no value"
                                  : "`" + where + "` has no field `" + name + "`");
        return nullptr;
      }
      // Keep the default alive with the declaration that lacked it.
      const_cast<Value*>(value)->slots.push_back({name, fallback, {}, {}});
      value = fallback.get();
    }
    where += "." + name;
  }
  return value;
}

ValuePtr Checker::eval_ref(const ast::Ref& ref, const Type& type, Module& module) {
  SourceRange range = module.at(ref);
  if (type.kind == Type::Kind::Enum && ref.path.size() == 1) {
    const std::string& member = ref.path[0];
    if (!type.enumeration->has(member)) {
      std::string hint = closest_name(member, type.enumeration->members);
      std::string members;
      for (const std::string& m : type.enumeration->members) {
        members += (members.empty() ? "" : ", ") + m;
      }
      diagnostics_.report(
          Code::E0306, range, "`" + member + "` is not a `" + type.enumeration->name + "`",
          hint.empty() ? "expected one of " + members : "did you mean `" + hint + "`?");
      return nullptr;
    }
    auto v = std::make_shared<Value>();
    v->kind = Value::Kind::Enum;
    v->text = member;
    v->range = range;
    return v;
  }
  if (type.kind == Type::Kind::Schema && type.schema->is_kind) {
    std::size_t consumed = 0;
    DeclState* state = resolve_decl(module, ref, consumed, type.schema);
    if (!state) return nullptr;
    if (consumed == ref.path.size()) {
      if (state->schema != type.schema) {
        Diagnostic& d =
            diagnostics_.report(Code::E0207, range,
                                "expected " + article(type.schema->name) + ", found the " +
                                    state->decl->kind.name + " `" + state->decl->name.name + "`");
        d.notes.push_back({"declared here", state->module->at(state->decl->name)});
        return nullptr;
      }
      ValuePtr value = eval_decl(*state, false, range);
      return value ? copy_value(*value, range) : nullptr;
    }
  }
  const Value* read = read_value(module, ref);
  if (!read) return nullptr;
  if (read->kind != value_kind(type) ||
      (read->kind == Value::Kind::Block && read->schema != type.schema) ||
      (read->kind == Value::Kind::Enum && !type.enumeration->has(read->text))) {
    diagnostics_.report(Code::E0301, range,
                        "expected " + type.describe() + ", found " + article(kind_word(read->kind)),
                        "this reads " + article(kind_word(read->kind)));
    return nullptr;
  }
  ValuePtr copy = copy_value(*read, range);
  if (!copy) return nullptr;
  copy->range = range;
  if (is_scalar(copy->kind) && !check_scalar(*copy, type, range)) return nullptr;
  return copy;
}

bool Checker::spend(std::size_t bytes, SourceRange at) {
  if (built_bytes_ + bytes <= limits::kMaxValueBytes) {
    built_bytes_ += bytes;
    return true;
  }
  if (budget_reported_) {
    // Reported once, yet each failure breaks what was being built: a declaration that lost a
    // value must not look complete (an env without its cluster reached the rules).
    ++silent_failures_;
    return false;
  }
  budget_reported_ = true;
  diagnostics_.report(Code::E0104, at,
                      "the values this program builds exceed " +
                          std::to_string(limits::kMaxValueBytes >> 20) + " MiB",
                      "the limit was crossed here");
  return false;
}

ValuePtr Checker::copy_value(const Value& value, SourceRange at) {
  // A clone shares its list's items (ValueList) and copies its text and slots.
  std::size_t bytes = value.text.size() + value.slots.size() * sizeof(Slot);
  return spend(bytes, at) ? clone(value) : nullptr;
}

}  // namespace mlenv::check
