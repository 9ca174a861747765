// Completion of each env's merged value: defaults, and required fields reported once.

#include <algorithm>
#include <set>

#include "compiler/check/checker.h"
#include "compiler/check/rules_hygiene.h"

namespace mlenv::check {

void Checker::complete(Value& value, const SchemaDef& schema, const DeclState& env,
                       const std::string& path) {
  if (value.completed) return;  // every default is there, every missing field reported
  value.completed = true;
  for (const FieldDef& field : schema.fields) {
    Slot* slot = value.slot(field.name);
    if (!slot) {
      const auto& failed = value.failed_fields;
      if (std::find(failed.begin(), failed.end(), field.name) != failed.end()) {
        continue;  // its assignment was the error, already reported
      }
      if (ValuePtr fallback = field_default(field)) {
        value.slots.push_back({field.name, fallback, {}, {}});
        slot = &value.slots.back();
      } else if (field.optional) {
        continue;
      } else {
        // A profile missing a field is reported once, however many envs use it.
        SourceRange owner = value.decl_range.valid() ? value.decl_range : value.range;
        if (!reported_missing_.insert({owner.file * 1000003u + owner.begin, path + field.name})
                 .second) {
          continue;
        }
        std::string in = value.decl.empty() ? "" : " of " + schema.name + " `" + value.decl + "`";
        const SourceRange env_at = env.module->at(env.decl->name);
        // A block written in the user's own file (a rail, `storage { }`) lacks the field where
        // it was written; a declaration, or a stdlib or fetched block, where the env uses it.
        const bool at_block =
            value.decl.empty() && value.range.valid() && is_users_file(value.range);
        Diagnostic& d =
            diagnostics_.report(Code::E0303, at_block ? value.range : env_at,
                                "missing required field `" + path + field.name + "`" + in,
                                at_block ? "this " + schema.name + " has no `" + field.name + "`"
                                         : "env `" + env.decl->name.name + "` needs it");
        // A note is one line: the doc's line breaks are where the schema's comment wrapped.
        std::string doc = field.doc;
        std::replace(doc.begin(), doc.end(), '\n', ' ');
        if (!doc.empty()) d.notes.push_back({"`" + field.name + "`: " + doc, {}});
        if (value.decl_range.valid() && value.decl_range != env_at) {
          d.notes.push_back(
              {"set it in `" + value.decl + "` or where the env extends it", value.decl_range});
        }
        if (at_block) d.notes.push_back({"env `" + env.decl->name.name + "` uses it", env_at});
        continue;
      }
    }
    Value& child = *slot->value;
    if (field.type.kind == Type::Kind::Schema && child.kind == Value::Kind::Block) {
      std::string prefix = child.decl.empty() ? path + field.name + "." : "";
      complete(child, *field.type.schema, env, prefix);
    } else if (field.type.kind == Type::Kind::List &&
               field.type.element->kind == Type::Kind::Schema) {
      for (std::size_t i = 0; i < child.items.size(); ++i) {
        complete(*child.items[i], *field.type.element->schema, env,
                 path + field.name + "[" + std::to_string(i) + "].");
      }
    }
  }
}

bool Checker::is_users_file(SourceRange range) const {
  const SourceFile& file = sources_.file(range.file);
  return file.origin().empty() && !file.path().starts_with("std/");
}

}  // namespace mlenv::check
