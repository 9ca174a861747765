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
        Diagnostic& d =
            diagnostics_.report(Code::E0303, env.module->at(env.decl->name),
                                "missing required field `" + path + field.name + "`" + in,
                                "env `" + env.decl->name.name + "` needs it");
        // A note is one line: the doc's line breaks are where the schema's comment wrapped.
        std::string doc = field.doc;
        std::replace(doc.begin(), doc.end(), '\n', ' ');
        if (!doc.empty()) d.notes.push_back({"`" + field.name + "`: " + doc, {}});
        if (value.decl_range.valid() && value.decl_range != env.module->at(env.decl->name)) {
          d.notes.push_back(
              {"set it in `" + value.decl + "` or where the env extends it", value.decl_range});
        }
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

}  // namespace mlenv::check
