#include "targets/common/value.h"

namespace mlenv::target {

Value Value::strings(const std::vector<std::string>& items) {
  Value out = seq();
  out.items_.reserve(items.size());
  for (const std::string& s : items) out.items_.emplace_back(s);
  return out;
}

Value Value::strings(std::initializer_list<std::string_view> items) {
  Value out = seq();
  out.items_.reserve(items.size());
  for (std::string_view s : items) out.items_.emplace_back(s);
  return out;
}

Value& Value::set(std::string key, Value value) {
  keys_.push_back(std::move(key));
  items_.push_back(std::move(value));
  return items_.back();
}

Value& Value::push(Value value) {
  items_.push_back(std::move(value));
  return items_.back();
}

const Value* Value::find(std::string_view key) const {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return &items_[i];
  }
  return nullptr;
}

Value* Value::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value&>(*this).find(key));
}

}  // namespace mlenv::target
