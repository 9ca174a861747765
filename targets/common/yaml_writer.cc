#include "targets/common/yaml_writer.h"

#include <array>
#include <cstdio>

namespace mlenv::target {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// A table of the bytes in `bytes`, for the scans below that look at every byte of every key and
// value (testing each byte against a list took a seventh of the instructions of a fleet's build).
constexpr std::array<bool, 256> byte_set(std::string_view bytes) {
  std::array<bool, 256> set{};
  for (char c : bytes) set[static_cast<unsigned char>(c)] = true;
  return set;
}

// The first bytes of the words is_reserved_word knows.
constexpr std::array<bool, 256> kReservedFirst = byte_set("yYnNtTfFoO~=<.");

// Words YAML 1.1 resolves to booleans or null (1.2 core is a subset of these).
bool is_reserved_word(std::string_view s) {
  // Most keys and values are short words ("kind", "spec"): rule them out by the first letter.
  if (s.empty() || !kReservedFirst[static_cast<unsigned char>(s.front())]) return false;
  static constexpr std::array<std::string_view, 31> kWords = {
      "y",    "Y",    "yes",   "Yes",   "YES",   "n",  "N",    "no",   "No",  "NO",  "true",
      "True", "TRUE", "false", "False", "FALSE", "on", "On",   "ON",   "off", "Off", "OFF",
      "null", "Null", "NULL",  "~",     "=",     "<<", ".inf", ".Inf", ".INF"};
  for (std::string_view w : kWords) {
    if (s == w) return true;
  }
  return false;
}

// Anything a YAML 1.1 or 1.2 resolver might read as an int, float, sexagesimal number or
// timestamp: a leading sign, dot or digit followed only by number-ish characters.
bool looks_numeric(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    std::string_view rest = s.substr(i + 1);
    if (rest == "inf" || rest == "Inf" || rest == "INF" || rest == "nan" || rest == "NaN" ||
        rest == "NAN") {
      return true;
    }
  }
  if (i >= s.size()) return false;
  if (!is_digit(s[i]) && !(s[i] == '.' && i + 1 < s.size() && is_digit(s[i + 1]))) return false;
  // Timestamps: 2001-12-14, 2001-12-14t21:59:43.10-05:00, 2001-12-14 21:59:43.10 -5.
  if (s.size() >= 8 && is_digit(s[0]) && is_digit(s[1]) && is_digit(s[2]) && is_digit(s[3]) &&
      s[4] == '-') {
    return true;
  }
  for (; i < s.size(); ++i) {
    char c = s[i];
    bool numberish = is_digit(c) || c == '_' || c == '.' || c == ':' || c == '+' || c == '-' ||
                     c == 'e' || c == 'E' || c == 'x' || c == 'X' || c == 'o' || c == 'O' ||
                     c == 'b' || c == 'B' || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!numberish) return false;
  }
  return true;
}

bool is_indicator(char c) {
  switch (c) {
    case '-':
    case '?':
    case ':':
    case ',':
    case '[':
    case ']':
    case '{':
    case '}':
    case '#':
    case '&':
    case '*':
    case '!':
    case '|':
    case '>':
    case '\'':
    case '"':
    case '%':
    case '@':
    case '`':
      return true;
    default:
      return false;
  }
}

// The length of the UTF-8 sequence at s[i] that no YAML reader may see raw, 0 for any other
// byte. YAML 1.1 (§5.4, "b-char") reads NEL U+0085, LINE SEPARATOR U+2028 and PARAGRAPH
// SEPARATOR U+2029 as line breaks, so a plain or block scalar holding one turns the rest of
// the line into structure for go-yaml v2, which `kubectl kustomize` uses; YAML 1.2 (§5.1)
// excludes the other C1 controls U+0080..U+009F from printable text, and U+FEFF is a byte
// order mark. C0 controls and DEL are single bytes, handled by the callers.
std::size_t unsafe_sequence(std::string_view s, std::size_t i) {
  auto at = [&](std::size_t k) {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0;
  };
  if (at(0) == 0xC2 && at(1) >= 0x80 && at(1) <= 0x9F) return 2;                     // C1, NEL
  if (at(0) == 0xE2 && at(1) == 0x80 && (at(2) == 0xA8 || at(2) == 0xA9)) return 3;  // LS, PS
  if (at(0) == 0xEF && at(1) == 0xBB && at(2) == 0xBF) return 3;                     // BOM
  return 0;
}

// C0 controls, DEL and the first bytes of what unsafe_sequence rejects, and `more`: the bytes
// a scan must look at closely; every other byte is written as it is.
constexpr std::array<bool, 256> unsafe_and(std::string_view more) {
  std::array<bool, 256> set = byte_set(more);
  for (std::size_t c = 0; c < 0x20; ++c) set[c] = true;
  for (unsigned char c : {0x7f, 0xc2, 0xe2, 0xef}) set[c] = true;
  return set;
}

// What can make a plain scalar need quotes where it stands (':' and '#' beside a space).
constexpr std::array<bool, 256> kLookCloser = unsafe_and(":#");
// What a double-quoted scalar may not hold as it is.
constexpr std::array<bool, 256> kEscaped = unsafe_and("\"\\");

void append_indent(std::string& out, int n) {
  out.append(static_cast<std::size_t>(n), ' ');
}

// A double-quoted scalar with every line break and control escaped: `\x` and `\u` escapes
// read the same in YAML 1.1 and 1.2 (§5.7 of both).
void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::size_t as_is = i;
    while (as_is < s.size() && !kEscaped[static_cast<unsigned char>(s[as_is])]) ++as_is;
    out.append(s.substr(i, as_is - i));
    i = as_is;
    if (i == s.size()) break;
    char c = s[i];
    unsigned char u = static_cast<unsigned char>(c);
    if (std::size_t n = unsafe_sequence(s, i)) {
      unsigned code = n == 2 ? u & 0x1Fu : u & 0x0Fu;
      for (std::size_t k = 1; k < n; ++k) {
        code = (code << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
      }
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", code);
      out += buf;
      i += n - 1;
      continue;
    }
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
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// A literal block keeps multi-line text (Dockerfile fragments, JSON files) readable in diffs.
bool fits_literal_block(std::string_view s) {
  if (s.find('\n') == std::string_view::npos || s.front() == ' ' || s.front() == '\n') {
    return false;
  }
  std::size_t line_start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '\n') {
      std::string_view line = s.substr(line_start, i - line_start);
      if (!line.empty() && line.find_first_not_of(' ') == std::string_view::npos) return false;
      line_start = i + 1;
      continue;
    }
    unsigned char u = static_cast<unsigned char>(s[i]);
    if ((u < 0x20 && s[i] != '\t') || u == 0x7f || (u >= 0xC2 && unsafe_sequence(s, i))) {
      return false;
    }
  }
  return true;
}

void append_literal_block(std::string& out, std::string_view s, int indent) {
  std::size_t trailing = 0;
  while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
  out += trailing == 0 ? "|-\n" : trailing == 1 ? "|\n" : "|+\n";
  std::string_view body = s.substr(0, s.size() - trailing);
  std::size_t start = 0;
  while (true) {
    std::size_t end = body.find('\n', start);
    std::string_view line =
        body.substr(start, end == std::string_view::npos ? body.size() - start : end - start);
    if (!line.empty()) append_indent(out, indent);
    out += line;
    out += '\n';
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  for (std::size_t i = 1; i < trailing; ++i) out += '\n';
}

void append_scalar(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null:
      out += "null";
      break;
    case Value::Kind::Bool:
      out += v.as_bool() ? "true" : "false";
      break;
    case Value::Kind::Int:
      out += std::to_string(v.as_int());
      break;
    case Value::Kind::String:
      if (yaml_needs_quotes(v.as_string())) {
        append_quoted(out, v.as_string());
      } else {
        out += v.as_string();
      }
      break;
    default:
      break;
  }
}

void write_node(std::string& out, const Value& v, int indent, bool inline_first);

// Writes what follows `key:` or `-`: a scalar on the same line, or a nested block.
void write_child(std::string& out, const Value& v, int indent, bool in_sequence) {
  if (v.is_map() && v.size() > 0) {
    if (in_sequence) {
      out += ' ';
      write_node(out, v, indent + 2, true);
    } else {
      out += '\n';
      write_node(out, v, indent + 2, false);
    }
  } else if (v.is_seq() && v.size() > 0) {
    if (in_sequence) {
      out += ' ';
      write_node(out, v, indent + 2, true);
    } else {
      out += '\n';
      write_node(out, v, indent, false);  // kubectl style: items at the key's indentation
    }
  } else if (v.is_map()) {
    out += " {}\n";
  } else if (v.is_seq()) {
    out += " []\n";
  } else if (v.kind() == Value::Kind::String && fits_literal_block(v.as_string())) {
    out += ' ';
    append_literal_block(out, v.as_string(), indent + 2);
  } else {
    out += ' ';
    append_scalar(out, v);
    out += '\n';
  }
}

void write_node(std::string& out, const Value& v, int indent, bool inline_first) {
  bool first = true;
  if (v.is_map()) {
    for (const Value& item : v.items()) {
      if (!(first && inline_first)) append_indent(out, indent);
      first = false;
      if (yaml_needs_quotes(item.key())) {
        append_quoted(out, item.key());
      } else {
        out += item.key();
      }
      out += ':';
      write_child(out, item, indent, false);
    }
  } else if (v.is_seq()) {
    for (const Value& item : v.items()) {
      if (!(first && inline_first)) append_indent(out, indent);
      first = false;
      out += '-';
      write_child(out, item, indent, true);
    }
  } else {
    append_scalar(out, v);
    out += '\n';
  }
}

}  // namespace

bool yaml_needs_quotes(std::string_view s) {
  if (s.empty()) return true;
  char first = s.front();
  // The longest reserved word has five characters; a number starts with a sign, dot or digit.
  if (s.size() <= 5 && is_reserved_word(s)) return true;
  if ((is_digit(first) || first == '+' || first == '-' || first == '.') && looks_numeric(s)) {
    return true;
  }
  if (first == ' ' || s.back() == ' ' || s.back() == ':') return true;
  if (is_indicator(first)) {
    // `--flag` and `-x` read back as plain strings; `- x`, `-`, `---` and `-1` do not.
    if (first != '-' || s.size() < 2 || s[1] == ' ' || s == "---") return true;
  }
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char u = static_cast<unsigned char>(s[i]);
    if (!kLookCloser[u]) continue;
    if (u < 0x20 || u == 0x7f || unsafe_sequence(s, i)) return true;
    if (s[i] == ':' && i + 1 < s.size() && s[i + 1] == ' ') return true;
    if (s[i] == '#' && i > 0 && s[i - 1] == ' ') return true;
  }
  return false;
}

void write_yaml(std::string& out, const Value& value) {
  if ((value.is_map() || value.is_seq()) && value.size() == 0) {
    out += value.is_map() ? "{}\n" : "[]\n";
    return;
  }
  write_node(out, value, 0, false);
}

std::string to_yaml(const Value& value) {
  std::string out;
  out.reserve(1024);  // most objects fit: no regrowth while writing
  write_yaml(out, value);
  return out;
}

}  // namespace mlenv::target
