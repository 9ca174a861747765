#pragma once
// A JSON-like document tree whose maps keep the order their keys were added in, so every
// emitted object has a fixed key order chosen by the code that builds it, never by a hash.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlenv::target {

class Value {
 public:
  enum class Kind : std::uint8_t { Null, Bool, Int, String, Seq, Map };

  Value() = default;
  Value(bool b) : kind_(Kind::Bool), int_(b ? 1 : 0) {}
  Value(int i) : kind_(Kind::Int), int_(i) {}
  Value(std::int64_t i) : kind_(Kind::Int), int_(i) {}
  Value(std::string s) : kind_(Kind::String), string_(std::move(s)) {}
  Value(std::string_view s) : kind_(Kind::String), string_(s) {}
  Value(const char* s) : kind_(Kind::String), string_(s) {}
  Value(const Value&) = default;
  Value(Value&&) noexcept = default;
  ~Value() = default;
  /// Replaces this value but keeps the key it is stored under, as assigning to a std::map's
  /// value does: after `*map.find("k") = v`, `k` is still in the map.
  Value& operator=(const Value& other);
  Value& operator=(Value&& other) noexcept;

  /// An empty map, to be filled with `set` in the order the keys should appear.
  static Value map() { return Value(Kind::Map); }
  /// An empty sequence, to be filled with `push`.
  static Value seq() { return Value(Kind::Seq); }
  /// A sequence of strings, the most common list in Kubernetes objects.
  static Value strings(const std::vector<std::string>& items);
  static Value strings(std::initializer_list<std::string_view> items);

  Kind kind() const { return kind_; }
  bool is_map() const { return kind_ == Kind::Map; }
  bool is_seq() const { return kind_ == Kind::Seq; }

  /// Appends `value` under `key` (maps only); keys are unique by construction, so no lookup is
  /// done.
  Value& set(std::string key, Value value);
  /// Appends an item (sequences only) and returns it, for building nested items in place.
  Value& push(Value value);
  /// The value at `key`, or nullptr (linear: maps here are small).
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);

  bool as_bool() const { return int_ != 0; }
  std::int64_t as_int() const { return int_; }
  const std::string& as_string() const { return string_; }
  /// The key this value was `set` under, for a map's items.
  const std::string& key() const { return key_; }
  /// A map's values (each with its key) or a sequence's items.
  const std::vector<Value>& items() const { return items_; }
  /// The same, to change items in place; not to reorder a map's (assignment keeps keys).
  std::vector<Value>& items() { return items_; }
  std::size_t size() const { return items_.size(); }

 private:
  explicit Value(Kind kind) : kind_(kind) {}

  Kind kind_ = Kind::Null;
  std::int64_t int_ = 0;
  std::string string_;
  // A map's key lives in its value, not in a vector of keys beside the values: one allocation
  // per map rather than two (allocation was a quarter of the instructions of rendering a fleet).
  std::string key_;
  std::vector<Value> items_;
};

}  // namespace mlenv::target
