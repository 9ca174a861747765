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
  return std::make_shared<Value>(value);
}

Value& unshare(ValuePtr& value) {
  if (value.use_count() > 1) value = clone(*value);
  return *value;
}

}  // namespace mlenv::check
