// The parse driver: limits, comment collection, item-by-item parsing with recovery, and
// documentation comments. The grammar itself lives in the *_def.h headers.

#include "compiler/parse/parser.h"

#include <string>

#include "compiler/base/limits.h"
#include "compiler/parse/grammar.h"
#include "compiler/parse/token_def.h"

namespace mlenv::parse {
namespace {

// Shell-style `#` comments, a newcomer's habit from YAML and Python: one error at the first,
// with the others as notes, instead of a syntax error and a cascade at each.
void report_hash_comments(const std::vector<SourceRange>& hashes, Diagnostics& diagnostics) {
  if (hashes.empty()) return;
  Diagnostic& d = diagnostics.report(Code::E0101, hashes.front(),
                                     "comments start with `//`, not `#`", "write `//` here");
  for (std::size_t k = 1; k < hashes.size(); ++k) {
    d.notes.push_back({"another `#` comment", hashes[k]});
  }
}

// One linear pass over the text that records comments for the formatter. Strings and
// heredocs are skipped as the grammar reads them (a string ends at its line's end, whatever
// precedes it; a heredoc only where its tag ends the line). Nesting is not counted here: the
// grammar enforces that limit itself (token_def.h, `nested`), so a divergence between this
// scan and the grammar can at worst misplace a comment, never let recursion run unbounded.
bool scan(FileId file, std::string_view text, ast::File& out, Diagnostics& diagnostics) {
  std::size_t i = byte_order_mark_size(text);
  const std::size_t n = text.size();
  std::vector<SourceRange> hash_comments;
  while (i < n) {
    char c = text[i];
    if (c == '#') {
      // Not a comment in this language, but read as one (the skipper does too), so the rest
      // of the file still parses and the one mistake is reported once.
      std::size_t end = std::min(text.find('\n', i), n);
      out.comments.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(end)});
      hash_comments.push_back(
          {file, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + 1)});
      i = end;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      std::size_t end = text.find('\n', i);
      if (end == std::string_view::npos) end = n;
      out.comments.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(end)});
      i = end;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      std::size_t end = text.find("*/", i + 2);
      if (end == std::string_view::npos) {
        diagnostics.report(Code::E0102,
                           {file, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + 2)},
                           "unterminated block comment", "this `/*` has no `*/`");
        return false;
      }
      out.comments.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(end + 2)});
      i = end + 2;
    } else if (c == '"') {
      for (++i; i < n && text[i] != '"' && text[i] != '\n'; ++i) {
        if (text[i] == '\\' && i + 1 < n && text[i + 1] != '\n') ++i;
      }
      ++i;
    } else if (c == '<' && i + 2 < n && text[i + 1] == '<' && is_ident_char(text[i + 2])) {
      std::size_t tag_end = i + 2;
      while (tag_end < n && is_ident_char(text[tag_end])) ++tag_end;
      std::string_view tag = text.substr(i + 2, tag_end - i - 2);
      i = tag_end;
      std::size_t eol = text.find_first_not_of(" \t\r", i);
      if (eol == std::string_view::npos || text[eol] != '\n') continue;  // not a heredoc
      // Skip to the terminator line; an unterminated heredoc is reported by the grammar.
      i = n;
      for (std::size_t line = eol; line != std::string_view::npos;
           line = text.find('\n', line + 1)) {
        std::size_t a = text.find_first_not_of(" \t", line + 1);
        if (a != std::string_view::npos && text.substr(a, tag.size()) == tag &&
            (a + tag.size() == n || !is_ident_char(text[a + tag.size()]))) {
          i = a + tag.size();
          break;
        }
      }
    } else {
      ++i;
    }
  }
  report_hash_comments(hash_comments, diagnostics);
  return true;
}

// True where a line starts a new top-level item: recovery resumes there.
bool starts_item(std::string_view text, std::size_t pos) {
  static constexpr std::string_view kWords[] = {"import",  "cluster", "image",  "env",
                                                "storage", "network", "schema", "enum"};
  for (std::string_view word : kWords) {
    if (text.substr(pos, word.size()) == word && pos + word.size() < text.size() &&
        (text[pos + word.size()] == ' ' || text[pos + word.size()] == '\t')) {
      return true;
    }
  }
  return false;
}

std::size_t next_item_start(std::string_view text, std::size_t pos) {
  for (std::size_t line = text.find('\n', pos); line != std::string_view::npos;
       line = text.find('\n', line + 1)) {
    if (starts_item(text, line + 1)) return line + 1;
  }
  return text.size();
}

// The `///` lines directly above `begin` (no blank line between), without the markers.
std::string doc_comment(std::string_view text, std::uint32_t begin) {
  std::string doc;
  std::size_t line_start = text.rfind('\n', begin == 0 ? 0 : begin - 1);
  if (line_start == std::string_view::npos) return doc;
  std::vector<std::string_view> lines;
  while (line_start != std::string_view::npos && line_start > 0) {
    std::size_t prev = text.rfind('\n', line_start - 1);
    std::size_t from = prev == std::string_view::npos ? 0 : prev + 1;
    std::string_view line = text.substr(from, line_start - from);
    std::size_t a = line.find_first_not_of(" \t");
    if (a == std::string_view::npos || line.substr(a, 3) != "///") break;
    line.remove_prefix(a + 3);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    lines.push_back(line);
    if (prev == std::string_view::npos) break;
    line_start = prev;
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!doc.empty()) doc += '\n';
    doc += *it;
  }
  return doc;
}

void attach_docs(std::string_view text, ast::Item& item) {
  if (auto* d = boost::get<ast::Decl>(&item)) {
    d->doc = doc_comment(text, d->begin);
  } else if (auto* s = boost::get<ast::Schema>(&item)) {
    s->doc = doc_comment(text, s->begin);
    for (ast::Field& f : s->fields) f.doc = doc_comment(text, f.begin);
  } else if (auto* e = boost::get<ast::Enum>(&item)) {
    e->doc = doc_comment(text, e->begin);
  }
}

std::string describe_expected(const std::string& which) {
  // Spirit names literal characters `'}'`; the diagnostics say `}`.
  if (which.size() == 3 && which.front() == '\'' && which.back() == '\'') {
    return "`" + which.substr(1, 1) + "`";
  }
  if (which.size() > 2 && which.front() == '"' && which.back() == '"') {
    return "`" + which.substr(1, which.size() - 2) + "`";
  }
  return which;
}

std::string describe_found(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return "end of file";
  char c = text[pos];
  if (c == '\n' || c == '\r') return "end of line";
  if (is_ident_char(c)) {
    std::size_t end = pos;
    while (end < text.size() && is_ident_char(text[end])) ++end;
    return "`" + std::string(text.substr(pos, std::min<std::size_t>(end - pos, 40))) + "`";
  }
  if (static_cast<unsigned char>(c) >= 0x80) return "a non-ASCII character";
  if (static_cast<unsigned char>(c) < 0x20) return "a control character";
  return "`" + std::string(1, c) + "`";
}

std::uint32_t token_end(std::string_view text, std::size_t pos) {
  std::size_t end = pos;
  while (end < text.size() && is_ident_char(text[end])) ++end;
  if (end == pos && pos < text.size() && text[pos] != '\n') ++end;
  return static_cast<std::uint32_t>(end);
}

}  // namespace

ast::File parse_file(FileId file, std::string_view text, Diagnostics& diagnostics) {
  ast::File out;
  if (text.size() > limits::kMaxFileBytes) {
    diagnostics.report(Code::E0104, {file, 0, 0},
                       "file is larger than " + std::to_string(limits::kMaxFileBytes) + " bytes");
    return out;
  }
  if (!scan(file, text, out, diagnostics)) return out;

  ParseState state{text.data(), &out.comments};
  const auto parser = x3::with<state_tag>(std::ref(state))[item()];
  const char* first = text.data() + byte_order_mark_size(text);
  const char* const last = text.data() + text.size();
  for (;;) {
    x3::skip_over(first, last, x3::make_context<x3::skipper_tag>(skipper));
    if (first == last) break;
    ast::Item parsed;
    state.depth = 0;
    state.unclosed = kNoPosition;
    std::size_t error_at = std::string_view::npos;
    try {
      if (x3::phrase_parse(first, last, parser, skipper, parsed)) {
        attach_docs(text, parsed);
        out.items.push_back(std::move(parsed));
        continue;
      }
      error_at = static_cast<std::size_t>(first - text.data());
      diagnostics.report(Code::E0101,
                         {file, static_cast<std::uint32_t>(error_at), token_end(text, error_at)},
                         "expected a declaration, found " + describe_found(text, error_at),
                         "expected `import`, `cluster`, `image`, `env`, `storage` or `network`");
    } catch (const x3::expectation_failure<iterator_type>& failure) {
      // Spirit reports the position before the skipper ran; point at the offending token.
      const char* where = failure.where();
      x3::skip_over(where, last, x3::make_context<x3::skipper_tag>(skipper));
      error_at = static_cast<std::size_t>(where - text.data());
      std::string which = failure.which();
      Code code = which == kExpectClosingQuote || which == kExpectHeredocEnd ? Code::E0102
                  : which == kExpectEscape                                   ? Code::E0103
                  : which == kNestingTooDeep                                 ? Code::E0104
                                                                             : Code::E0101;
      std::string message =
          code == Code::E0102
              ? "unterminated " + std::string(which == kExpectHeredocEnd ? "heredoc" : "string")
          : code == Code::E0103 ? std::string("invalid escape sequence")
          : code == Code::E0104
              ? "nesting deeper than " + std::to_string(limits::kMaxNestingDepth) + " levels"
              : "expected " + describe_expected(which) + ", found " +
                    describe_found(text, error_at);
      std::string label = code == Code::E0101   ? "expected " + describe_expected(which)
                          : code == Code::E0104 ? "too deep"
                                                : "";
      Diagnostic& d = diagnostics.report(
          code, {file, static_cast<std::uint32_t>(error_at), token_end(text, error_at)},
          std::move(message), std::move(label));
      if (state.unclosed != kNoPosition && code == Code::E0101) {
        d.notes.push_back(
            {"the unclosed `" + std::string(1, text[state.unclosed]) + "` opened here",
             {file, state.unclosed, state.unclosed + 1}});
      }
    }
    first = text.data() + next_item_start(text, error_at);
  }
  return out;
}

}  // namespace mlenv::parse
