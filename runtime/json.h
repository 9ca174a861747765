#pragma once
// A small JSON value with a reader and a writer. mlenv-boot is dependency-free so that the emitted
// Dockerfile can build it inside any image; this covers boot.json, the wire protocol and results.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace boot {

/// One JSON value; objects keep insertion order so written documents are stable and readable.
class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool value) : value_(value) {}
  Json(int value) : value_(static_cast<double>(value)) {}
  Json(std::int64_t value) : value_(static_cast<double>(value)) {}
  Json(double value) : value_(value) {}
  Json(const char* value) : value_(std::string(value)) {}
  Json(std::string value) : value_(std::move(value)) {}
  Json(Array value) : value_(std::move(value)) {}
  Json(Object value) : value_(std::move(value)) {}

  /// An empty object, to be filled with set().
  static Json object() { return Json(Object{}); }
  /// An empty array, to be filled with push().
  static Json array() { return Json(Array{}); }

  bool is_null() const { return std::holds_alternative<std::monostate>(value_); }
  bool is_bool() const { return std::holds_alternative<bool>(value_); }
  bool is_number() const { return std::holds_alternative<double>(value_); }
  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  bool is_array() const { return std::holds_alternative<Array>(value_); }
  bool is_object() const { return std::holds_alternative<Object>(value_); }
  /// Whether this is a number with no fractional part that fits an int64.
  bool is_integer() const;

  bool as_bool() const { return std::get<bool>(value_); }
  double as_number() const { return std::get<double>(value_); }
  std::int64_t as_int() const { return static_cast<std::int64_t>(std::get<double>(value_)); }
  const std::string& as_string() const { return std::get<std::string>(value_); }
  const Array& as_array() const { return std::get<Array>(value_); }
  const Object& as_object() const { return std::get<Object>(value_); }

  /// The member with this key, or nullptr when absent or when this is not an object.
  const Json* find(std::string_view key) const;
  /// Sets a member, replacing an existing one in place so the key order stays the first one.
  Json& set(std::string key, Json value);
  /// Appends to an array.
  Json& push(Json value);

  /// Compact text on one line: the wire protocol is one message per line.
  std::string dump() const;
  /// Indented text for people (dry-run plans, results.json).
  std::string pretty() const;

  friend bool operator==(const Json&, const Json&) = default;

 private:
  void write(std::string& out, int indent, int depth) const;

  std::variant<std::monostate, bool, double, std::string, Array, Object> value_;
};

/// A parsed document, or the reason and byte offset where parsing stopped.
struct JsonParseResult {
  std::optional<Json> value;
  std::string error;
  size_t offset = 0;
};

/// Parses one JSON document; trailing non-space text is an error.
JsonParseResult parse_json(std::string_view text);

/// A string map as a JSON object, keys sorted (std::map order), for environments.
Json to_json(const std::map<std::string, std::string>& map);

}  // namespace boot
