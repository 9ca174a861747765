#include "json.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace boot {

bool Json::is_integer() const {
  if (!is_number()) return false;
  double value = as_number();
  return std::isfinite(value) && std::floor(value) == value && std::fabs(value) < 9.0e18;
}

const Json* Json::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [name, value] : as_object()) {
    if (name == key) return &value;
  }
  return nullptr;
}

Json& Json::set(std::string key, Json value) {
  auto& members = std::get<Object>(value_);
  for (auto& [name, existing] : members) {
    if (name == key) {
      existing = std::move(value);
      return *this;
    }
  }
  members.emplace_back(std::move(key), std::move(value));
  return *this;
}

Json& Json::push(Json value) {
  std::get<Array>(value_).push_back(std::move(value));
  return *this;
}

namespace {

void write_string(std::string& out, std::string_view text) {
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void write_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";  // JSON has no NaN or infinity; a reader must see the value as absent.
    return;
  }
  char text[32];
  if (std::floor(value) == value && std::fabs(value) < 9.0e15) {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  } else {
    std::snprintf(text, sizeof text, "%.17g", value);
    // Prefer the shortest text that reads back to the same double.
    for (int precision = 6; precision < 17; ++precision) {
      char shorter[32];
      std::snprintf(shorter, sizeof shorter, "%.*g", precision, value);
      if (std::strtod(shorter, nullptr) == value) {
        std::snprintf(text, sizeof text, "%s", shorter);
        break;
      }
    }
  }
  out += text;
}

void newline(std::string& out, int indent, int depth) {
  if (indent <= 0) return;
  out += '\n';
  out.append(static_cast<size_t>(indent * depth), ' ');
}

}  // namespace

void Json::write(std::string& out, int indent, int depth) const {
  if (is_null()) {
    out += "null";
  } else if (is_bool()) {
    out += as_bool() ? "true" : "false";
  } else if (is_number()) {
    write_number(out, as_number());
  } else if (is_string()) {
    write_string(out, as_string());
  } else if (is_array()) {
    const Array& items = as_array();
    out += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += indent > 0 ? "," : ",";
      newline(out, indent, depth + 1);
      items[i].write(out, indent, depth + 1);
    }
    if (!items.empty()) newline(out, indent, depth);
    out += ']';
  } else {
    const Object& members = as_object();
    out += '{';
    for (size_t i = 0; i < members.size(); ++i) {
      if (i) out += ',';
      newline(out, indent, depth + 1);
      write_string(out, members[i].first);
      out += indent > 0 ? ": " : ":";
      members[i].second.write(out, indent, depth + 1);
    }
    if (!members.empty()) newline(out, indent, depth);
    out += '}';
  }
}

std::string Json::dump() const {
  std::string out;
  write(out, 0, 0);
  return out;
}

std::string Json::pretty() const {
  std::string out;
  write(out, 2, 0);
  out += '\n';
  return out;
}

namespace {

// A recursive-descent reader; depth is bounded so a hostile peer cannot exhaust the stack.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  JsonParseResult run() {
    JsonParseResult result;
    Json value;
    if (parse_value(value, 0)) {
      skip_space();
      if (pos_ == text_.size()) {
        result.value = std::move(value);
        return result;
      }
      fail("unexpected text after the document");
    }
    result.error = error_;
    result.offset = pos_;
    return result;
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool fail(const char* message) {
    if (error_.empty()) error_ = message;
    return false;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool parse_value(Json& out, int depth) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    skip_space();
    if (pos_ >= text_.size()) return fail("unexpected end of input");
    char c = text_[pos_];
    if (c == '{') return parse_object(out, depth);
    if (c == '[') return parse_array(out, depth);
    if (c == '"') {
      std::string text;
      if (!parse_string(text)) return false;
      out = Json(std::move(text));
      return true;
    }
    if (c == 't') return literal("true") && (out = Json(true), true);
    if (c == 'f') return literal("false") && (out = Json(false), true);
    if (c == 'n') return literal("null") && (out = Json(), true);
    return parse_number(out);
  }

  bool parse_number(Json& out) {
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    size_t digits = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == digits) return fail("invalid value");
    if (text_[digits] == '0' && pos_ - digits > 1) return fail("leading zero in a number");
    if (pos_ < text_.size() && text_[pos_] == '.') {
      size_t fraction = ++pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ == fraction) return fail("invalid number");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      size_t exponent = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ == exponent) return fail("invalid number");
    }
    std::string number(text_.substr(start, pos_ - start));
    double value = std::strtod(number.c_str(), nullptr);
    // strtod makes 1e400 infinity, which JSON cannot express: the writer would turn it into null
    // and a duration check would meet an infinite timeout (found by tests/fuzz/fuzz_boot).
    if (!std::isfinite(value)) {
      pos_ = start;
      return fail("number out of range");
    }
    out = Json(value);
    return true;
  }

  bool parse_hex4(unsigned& code) {
    if (pos_ + 4 > text_.size()) return fail("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        code |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        code |= static_cast<unsigned>(c - 'A' + 10);
      else
        return fail("invalid \\u escape");
    }
    return true;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  bool parse_string(std::string& out) {
    ++pos_;  // the opening quote
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      char escape = text_[pos_++];
      switch (escape) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned code;
          if (!parse_hex4(code)) return false;
          if (code >= 0xD800 && code < 0xDC00) {
            unsigned low;
            if (text_.substr(pos_, 2) != "\\u") return fail("unpaired surrogate");
            pos_ += 2;
            if (!parse_hex4(low)) return false;
            if (low < 0xDC00 || low >= 0xE000) return fail("unpaired surrogate");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code < 0xE000) {
            return fail("unpaired surrogate");
          }
          append_utf8(out, code);
          break;
        }
        default:
          return fail("invalid escape");
      }
    }
    return fail("unterminated string");
  }

  bool parse_array(Json& out, int depth) {
    ++pos_;
    Json::Array items;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      out = Json(std::move(items));
      return true;
    }
    for (;;) {
      Json item;
      if (!parse_value(item, depth + 1)) return false;
      items.push_back(std::move(item));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        out = Json(std::move(items));
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool parse_object(Json& out, int depth) {
    ++pos_;
    Json result = Json::object();
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      out = std::move(result);
      return true;
    }
    for (;;) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') return fail("expected a member name");
      std::string key;
      if (!parse_string(key)) return false;
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ':') return fail("expected ':'");
      ++pos_;
      Json value;
      if (!parse_value(value, depth + 1)) return false;
      if (result.find(key)) return fail("duplicate member name");
      result.set(std::move(key), std::move(value));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        out = std::move(result);
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

JsonParseResult parse_json(std::string_view text) {
  return Parser(text).run();
}

Json to_json(const std::map<std::string, std::string>& map) {
  Json out = Json::object();
  for (const auto& [key, value] : map) out.set(key, value);
  return out;
}

}  // namespace boot
