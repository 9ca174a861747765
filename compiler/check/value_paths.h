#pragma once
// Reading fields of a checked Value by path: what rules and lowering share. A missing field
// reads as empty, so callers never test each step.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "compiler/check/value.h"

namespace mlenv::check {

/// The value at `path` below `value`, or nullptr where any step is missing.
inline const Value* get_path(const Value* value, std::initializer_list<const char*> path) {
  for (const char* name : path) {
    if (!value || value->kind != Value::Kind::Block) return nullptr;
    value = value->get(name);
  }
  return value;
}

/// The text of the value at `path`, or "".
inline std::string text_at(const Value* root, std::initializer_list<const char*> path) {
  const Value* v = get_path(root, path);
  return v ? v->text : std::string();
}

/// The number of the value at `path`, or `fallback`.
inline std::int64_t int_at(const Value* root, std::initializer_list<const char*> path,
                           std::int64_t fallback) {
  const Value* v = get_path(root, path);
  return v ? v->number : fallback;
}

/// The texts of the list at `path`, or none.
inline std::vector<std::string> strings_at(const Value* root,
                                           std::initializer_list<const char*> path) {
  std::vector<std::string> out;
  if (const Value* v = get_path(root, path)) {
    for (const auto& item : v->items) out.push_back(item->text);
  }
  return out;
}

/// Where the value at `path` was written, or `root`'s range when it is missing.
inline SourceRange range_at(const Value& root, std::initializer_list<const char*> path) {
  const Value* v = get_path(&root, path);
  return v ? v->range : root.range;
}

/// Where `value` was declared, for a declaration's value; else where it was written.
inline SourceRange declared_at(const Value& value) {
  return value.decl_range.valid() ? value.decl_range : value.range;
}

/// Where `field` of `parent` was assigned (the entry `field = ...`), else where its value was
/// written: a value read through a reference (`storage = nfs.rwx`) was written in the
/// referenced declaration, but the user's choice is the assignment.
inline SourceRange assigned_at(const Value& parent, const char* field) {
  const Slot* slot = parent.slot(field);
  if (slot && slot->assigned.valid()) return slot->assigned;
  return range_at(parent, {field});
}

}  // namespace mlenv::check
