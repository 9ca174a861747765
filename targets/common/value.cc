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

// Most maps and sequences of an object hold a few entries: start with room for four rather
// than growing one, two, four (this is most of the allocation in rendering a fleet).
constexpr std::size_t kFirstCapacity = 4;

Value& Value::operator=(const Value& other) {
  if (this == &other) return *this;
  Value copy = other;
  return *this = std::move(copy);
}

Value& Value::operator=(Value&& other) noexcept {
  kind_ = other.kind_;
  int_ = other.int_;
  string_ = std::move(other.string_);
  items_ = std::move(other.items_);
  return *this;
}

Value& Value::set(std::string key, Value value) {
  if (items_.capacity() == 0) items_.reserve(kFirstCapacity);
  value.key_ = std::move(key);
  items_.push_back(std::move(value));
  return items_.back();
}

Value& Value::push(Value value) {
  if (items_.capacity() == 0) items_.reserve(kFirstCapacity);
  items_.push_back(std::move(value));
  return items_.back();
}

const Value* Value::find(std::string_view key) const {
  for (const Value& item : items_) {
    if (item.key_ == key) return &item;
  }
  return nullptr;
}

Value* Value::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value&>(*this).find(key));
}

}  // namespace mlenv::target
