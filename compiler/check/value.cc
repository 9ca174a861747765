#include "compiler/check/value.h"

namespace mlenv::check {

Slot* Value::slot(const std::string& name) {
  for (Slot& s : slots) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const Slot* Value::slot(const std::string& name) const {
  return const_cast<Value*>(this)->slot(name);
}

const Value* Value::get(const std::string& name) const {
  const Slot* s = slot(name);
  return s ? s->value.get() : nullptr;
}

ValuePtr clone(const Value& value) {
  auto copy = std::make_shared<Value>(value);
  for (auto& item : copy->items) item = clone(*item);
  for (Slot& s : copy->slots) s.value = clone(*s.value);
  return copy;
}

}  // namespace mlenv::check
