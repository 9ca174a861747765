#include "compiler/check/value.h"

#include <algorithm>

namespace mlenv::check {

std::size_t ValueList::append_cost(std::size_t more) const {
  return more + (owns_end() || !buffer_ ? 0 : size_);
}

void ValueList::push_back(ValuePtr item) {
  if (!owns_end()) {
    buffer_ = std::make_shared<std::vector<ValuePtr>>(begin(), end());
  }
  buffer_->push_back(std::move(item));
  ++size_;
}

void ValueList::append(const ValueList& more) {
  // `more` may share this buffer (`xs += xs`): take its items before the buffer grows.
  std::vector<ValuePtr> added(more.begin(), more.end());
  for (ValuePtr& item : added) push_back(std::move(item));
}

Slot* Value::slot(std::string_view name) {
  if (slots.size() <= kScannedSlots) {
    for (Slot& s : slots) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
  std::optional<std::size_t> at = slot_index.find(slots, name);
  return at ? &slots[*at] : nullptr;
}

std::optional<std::size_t> SlotIndex::find(const std::vector<Slot>& slots, std::string_view name) {
  if (!index_) index_ = std::make_unique<Index>();
  for (; index_->indexed < slots.size(); ++index_->indexed)
    index_->positions.emplace(slots[index_->indexed].name, index_->indexed);
  auto it = index_->positions.find(name);
  if (it == index_->positions.end()) return std::nullopt;
  return it->second;
}

const Slot* Value::slot(std::string_view name) const {
  return const_cast<Value*>(this)->slot(name);
}

const Value* Value::get(std::string_view name) const {
  const Slot* s = slot(name);
  return s ? s->value.get() : nullptr;
}

void Value::mark_failed(const std::string& name) {
  // Only a schema's fields can be missing (complete()); a map's failed keys need no record,
  // and a linear search per key made 50,000 failing keys cost 31 s.
  if (!schema) return;
  if (std::find(failed_fields.begin(), failed_fields.end(), name) == failed_fields.end()) {
    failed_fields.push_back(name);
  }
}

ValuePtr clone(const Value& value) {
  return std::make_shared<Value>(value);
}

Value& unshare(ValuePtr& value) {
  if (value.use_count() > 1) value = clone(*value);
  return *value;
}

}  // namespace mlenv::check
