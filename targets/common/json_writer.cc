#include "targets/common/json_writer.h"

#include "compiler/diag/render.h"

namespace mlenv::target {
namespace {

void append_string(std::string& out, const std::string& s) {
  out += '"';
  append_json_escaped(out, s);
  out += '"';
}

void write(std::string& out, const Value& v, int indent, bool pretty) {
  auto newline = [&](int n) {
    if (!pretty) return;
    out += '\n';
    out.append(static_cast<std::size_t>(n), ' ');
  };
  switch (v.kind()) {
    case Value::Kind::Null:
      out += "null";
      return;
    case Value::Kind::Bool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::Int:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::String:
      append_string(out, v.as_string());
      return;
    case Value::Kind::Seq:
    case Value::Kind::Map: {
      bool map = v.is_map();
      out += map ? '{' : '[';
      if (v.size() == 0) {
        out += map ? '}' : ']';
        return;
      }
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i > 0) out += ',';
        newline(indent + 2);
        if (map) {
          append_string(out, v.items()[i].key());
          out += pretty ? ": " : ":";
        }
        write(out, v.items()[i], indent + 2, pretty);
      }
      newline(indent);
      out += map ? '}' : ']';
      return;
    }
  }
}

}  // namespace

std::string to_json_file(const Value& value) {
  std::string out;
  write(out, value, 0, true);
  out += '\n';
  return out;
}

std::string to_json_compact(const Value& value) {
  std::string out;
  write(out, value, 0, false);
  return out;
}

}  // namespace mlenv::target
