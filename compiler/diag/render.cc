#include "compiler/diag/render.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace mlenv {
namespace {

std::string_view severity_word(Severity severity) {
  switch (severity) {
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Note:
      return "note";
  }
  return "error";
}

// At most this many bytes of a source line are shown: a 69 KB line repeated by each of its
// diagnostics once made 1 GB of output. Longer lines show a window around the caret.
constexpr std::size_t kMaxExcerpt = 120;
constexpr std::size_t kContextBefore = 40;

// Moves a byte offset back to the start of a UTF-8 character.
std::size_t char_start(std::string_view text, std::size_t at) {
  while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return at;
}

// `line` with the user part of every `scheme://user:secret@host` masked by `*`, one for one so
// the carets still line up: an import URL that carries a token is refused (E0220), and its
// excerpt must not print the token into a CI log (issue 32).
std::string without_credentials(std::string_view line) {
  std::string out(line);
  for (std::size_t scheme = out.find("://"); scheme != std::string::npos;
       scheme = out.find("://", scheme + 3)) {
    std::size_t start = scheme + 3;
    std::size_t end = out.find_first_of("/\"' \t", start);
    if (end == std::string::npos) end = out.size();
    std::size_t at = out.rfind('@', end == 0 ? 0 : end - 1);
    if (at == std::string::npos || at < start) continue;
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(start),
              out.begin() + static_cast<std::ptrdiff_t>(at), '*');
  }
  return out;
}

// Prints the source line of `range` with a caret run under it, and `label` after the carets.
// Control characters other than tab print as `?`: a program's text must not drive the terminal.
void render_snippet(std::ostream& out, const SourceFile& file, SourceRange range,
                    const std::string& label) {
  LineColumn start = file.position(range.begin);
  LineColumn stop = file.position(range.end > range.begin ? range.end - 1 : range.begin);
  std::string masked = without_credentials(file.line(start.line));
  std::string_view line = masked;
  std::string number = std::to_string(start.line);
  std::string gutter(number.size(), ' ');
  std::size_t width = stop.line == start.line
                          ? stop.column - start.column + 1
                          : line.size() + 1 - std::min<std::size_t>(line.size(), start.column - 1);
  width = std::max<std::size_t>(width, 1);
  std::size_t caret = start.column - 1;  // byte offset of the caret in the line
  std::size_t from = 0, to = line.size();
  if (line.size() > kMaxExcerpt) {
    from = caret > kContextBefore ? caret - kContextBefore : 0;
    from = char_start(line, std::min(from, line.size() - kMaxExcerpt));
    to = char_start(line, std::min(line.size(), from + kMaxExcerpt));
  }
  std::string shown = from > 0 ? "\u2026" : "";
  for (std::size_t i = from; i < to; ++i) {
    auto u = static_cast<unsigned char>(line[i]);
    shown += (u < 0x20 && line[i] != '\t') || u == 0x7f ? '?' : line[i];
  }
  if (to < line.size()) shown += "\u2026";
  std::string pad = from > 0 ? " " : "";
  for (std::size_t i = from; i < caret && i < to; ++i) pad += line[i] == '\t' ? '\t' : ' ';
  width = std::min(width, to > caret ? to - caret + (to < line.size()) : 1);
  out << gutter << " |\n"
      << number << " | " << shown << "\n"
      << gutter << " | " << pad << std::string(width, '^');
  if (!label.empty()) out << ' ' << label;
  out << '\n';
}

std::string location(const SourceManager& sources, SourceRange range) {
  if (!range.valid()) return "";
  const SourceFile& file = sources.file(range.file);
  LineColumn pos = file.position(range.begin);
  return file.path() + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column);
}

}  // namespace

void render_text(std::ostream& out, const SourceManager& sources, const Diagnostic& d, bool color) {
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  const char* tint = !color ? "" : d.severity == Severity::Error ? "\033[1;31m" : "\033[1;33m";
  std::string where = location(sources, d.range);
  out << bold << (where.empty() ? "mlenvc" : where) << ": " << reset << tint
      << severity_word(d.severity) << '[' << code_info(d.code).id << "]" << reset << bold << ": "
      << printable(d.message) << reset << '\n';
  if (d.range.valid()) {
    const SourceFile& file = sources.file(d.range.file);
    render_snippet(out, file, d.range, printable(d.label));
    if (!file.origin().empty()) out << "   = note: defined in " << printable(file.origin()) << '\n';
  } else if (!d.label.empty()) {
    out << "   = " << printable(d.label) << '\n';
  }
  for (const DiagnosticNote& note : d.notes) {
    out << "   = note: " << printable(note.message);
    if (note.range.valid()) {
      const std::string& origin = sources.file(note.range.file).origin();
      out << " (" << location(sources, note.range)
          << (origin.empty() ? "" : ", defined in " + printable(origin)) << ")";
    }
    out << '\n';
  }
}

void append_json_escaped(std::string& out, std::string_view text) {
  auto as_is = [](char c) {
    auto u = static_cast<unsigned char>(c);
    return c != '"' && c != '\\' && u >= 0x20 && u != 0x7f;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    // The bytes that need no escape, most of every boot.json and plan.json, appended at once.
    std::size_t end = i;
    while (end < text.size() && as_is(text[end])) ++end;
    out.append(text.substr(i, end - i));
    if (end == text.size()) return;
    i = end;
    char c = text[i];
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
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned char>(c));
          out += buffer;
        } else {
          out += c;
        }
    }
  }
}

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_json_escaped(out, text);
  return out;
}

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  auto escape = [&out](unsigned code) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "\\u%04x", code);
    out += buffer;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' && keep_newlines) {
      out += '\n';
    } else if (c < 0x20 || c == 0x7f) {
      escape(c);
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      escape(static_cast<unsigned char>(text[++i]));  // C1 as UTF-8 (U+0080..U+009F)
    } else if (c >= 0x80 && c <= 0x9f &&
               (i == 0 || static_cast<unsigned char>(text[i - 1]) < 0x80)) {
      escape(c);  // a lone C1 byte, which 8-bit terminals read as CSI and the like
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

void json_range(std::ostream& out, const SourceManager& sources, SourceRange range) {
  if (!range.valid()) {
    out << "null";
    return;
  }
  const SourceFile& file = sources.file(range.file);
  LineColumn start = file.position(range.begin);
  LineColumn end = file.position(range.end);
  out << "{\"file\":\"" << json_escape(file.path());
  if (!file.origin().empty()) out << "\",\"origin\":\"" << json_escape(file.origin());
  out << "\",\"byte_start\":" << range.begin << ",\"byte_end\":" << range.end
      << ",\"start\":{\"line\":" << start.line << ",\"column\":" << start.column
      << "},\"end\":{\"line\":" << end.line << ",\"column\":" << end.column << "}}";
}

}  // namespace

void render_json(std::ostream& out, const SourceManager& sources, const Diagnostic& d) {
  out << "{\"code\":\"" << code_info(d.code).id << "\",\"severity\":\"" << severity_word(d.severity)
      << "\",\"message\":\"" << json_escape(d.message) << "\",\"label\":\"" << json_escape(d.label)
      << "\",\"range\":";
  json_range(out, sources, d.range);
  out << ",\"notes\":[";
  for (std::size_t i = 0; i < d.notes.size(); ++i) {
    if (i) out << ',';
    out << "{\"message\":\"" << json_escape(d.notes[i].message) << "\",\"range\":";
    json_range(out, sources, d.notes[i].range);
    out << '}';
  }
  out << "]}\n";
}

}  // namespace mlenv
