#pragma once
// Token-level rules shared by both grammar groups: identifiers, references, numbers, strings,
// heredocs, keys and keywords. Included by expression_def.h and declaration_def.h; the rules
// are defined inline, so each group owns its own instantiation of them.

#include <cstdint>
#include <string>
#include <type_traits>

#include "compiler/base/limits.h"
#include "compiler/parse/grammar.h"

namespace mlenv::parse {

/// Error-handler base for every rule ID: records the byte range of each Located node.
struct annotate_position {
  template <typename Iterator, typename Node, typename Context>
  void on_success(const Iterator& first, const Iterator& last, Node& node,
                  const Context& context) const {
    if constexpr (std::is_base_of_v<ast::Located, Node>) {
      const ParseState& state = x3::get<state_tag>(context).get();
      auto end = static_cast<std::uint32_t>(last - state.base);
      node.begin = state.skip(static_cast<std::uint32_t>(first - state.base), end);
      node.end = state.trim(node.begin, end);
    }
  }
};

// Messages carried by expectation failures; parser.cc maps them to diagnostic codes.
inline constexpr const char* kExpectClosingQuote = "closing `\"`";
inline constexpr const char* kExpectEscape = "escape sequence";
inline constexpr const char* kExpectHeredocEnd = "heredoc terminator";
inline constexpr const char* kNestingTooDeep = "nesting within the limit";

inline bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// `"..."` with escapes and `${a.b}` interpolation. Hand-written because escapes decode to
/// UTF-8 and interpolations need their own byte ranges.
struct quoted_string_parser : x3::parser<quoted_string_parser> {
  using attribute_type = ast::StringLit;
  static const bool has_attribute = true;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, const It& last, const Ctx& ctx, RCtx&, Attr& attr) const {
    x3::skip_over(first, last, ctx);
    if (first == last || *first != '"') return false;
    const char* base = x3::get<state_tag>(ctx).get().base;
    ast::StringLit result;
    std::string chunk;
    It it = first + 1;
    auto flush = [&] {
      if (!chunk.empty()) result.parts.emplace_back(std::move(chunk));
      chunk.clear();
    };
    for (;;) {
      // Reported at the opening quote: the end of the line says nothing about which string.
      if (it == last || *it == '\n') throw x3::expectation_failure<It>(first, kExpectClosingQuote);
      char c = *it;
      if (c == '"') {
        ++it;
        break;
      }
      if (c == '\\') {
        It escape = it++;
        if (it == last) throw x3::expectation_failure<It>(first, kExpectClosingQuote);
        switch (*it) {
          case '"':
            chunk += '"';
            break;
          case '\\':
            chunk += '\\';
            break;
          case '$':
            chunk += '$';
            break;
          case 'n':
            chunk += '\n';
            break;
          case 't':
            chunk += '\t';
            break;
          case 'u': {
            std::uint32_t cp = 0;
            int digits = 0;
            if (++it == last || *it != '{')
              throw x3::expectation_failure<It>(escape, kExpectEscape);
            for (++it; it != last && *it != '}' && digits < 7; ++it, ++digits) {
              char h = *it;
              int v = h >= '0' && h <= '9'   ? h - '0'
                      : h >= 'a' && h <= 'f' ? h - 'a' + 10
                      : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                             : -1;
              if (v < 0) throw x3::expectation_failure<It>(escape, kExpectEscape);
              cp = cp * 16 + static_cast<std::uint32_t>(v);
            }
            if (it == last || digits == 0 || digits > 6 || cp > 0x10FFFF ||
                (cp >= 0xD800 && cp <= 0xDFFF)) {
              throw x3::expectation_failure<It>(escape, kExpectEscape);
            }
            append_utf8(chunk, cp);
            break;
          }
          default:
            throw x3::expectation_failure<It>(escape, kExpectEscape);
        }
        ++it;
        continue;
      }
      if (c == '$' && it + 1 != last && *(it + 1) == '{') {
        flush();
        ast::Interpolation interpolation;
        interpolation.begin = static_cast<std::uint32_t>(it - base);
        it += 2;
        interpolation.ref.begin = static_cast<std::uint32_t>(it - base);
        for (;;) {
          It start = it;
          while (it != last && is_ident_char(*it)) ++it;
          if (it == start || (*start >= '0' && *start <= '9') || *start == '-') {
            throw x3::expectation_failure<It>(start, "reference");
          }
          interpolation.ref.path.emplace_back(start, it);
          if (it != last && *it == '.') {
            ++it;
            continue;
          }
          break;
        }
        interpolation.ref.end = static_cast<std::uint32_t>(it - base);
        if (it == last || *it != '}') {
          throw x3::expectation_failure<It>(it, "`}` closing the interpolation");
        }
        ++it;
        interpolation.end = static_cast<std::uint32_t>(it - base);
        result.parts.emplace_back(std::move(interpolation));
        continue;
      }
      chunk += c;
      ++it;
    }
    flush();
    first = it;
    if constexpr (!std::is_same_v<Attr, x3::unused_type>) attr = std::move(result);
    return true;
  }
};

/// `<<TAG` newline, lines, then a line holding only TAG. The common indentation of the lines
/// is removed; the text is raw (no escapes, no interpolation: Dockerfile fragments use `${}`).
struct heredoc_parser : x3::parser<heredoc_parser> {
  using attribute_type = ast::StringLit;
  static const bool has_attribute = true;

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, const It& last, const Ctx& ctx, RCtx&, Attr& attr) const {
    x3::skip_over(first, last, ctx);
    if (last - first < 3 || first[0] != '<' || first[1] != '<') return false;
    It it = first + 2;
    It tag_start = it;
    while (it != last && is_ident_char(*it)) ++it;
    if (it == tag_start) return false;
    std::string tag(tag_start, it);
    while (it != last && (*it == ' ' || *it == '\t' || *it == '\r')) ++it;
    if (it == last || *it != '\n')
      throw x3::expectation_failure<It>(it, "newline after the heredoc tag");
    ++it;
    std::vector<std::string> lines;
    for (;;) {
      if (it == last) throw x3::expectation_failure<It>(first, kExpectHeredocEnd);
      It line_start = it;
      while (it != last && *it != '\n') ++it;
      std::string line(line_start, it);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::size_t a = line.find_first_not_of(" \t");
      if (a != std::string::npos && line.compare(a, tag.size(), tag) == 0 &&
          (a + tag.size() == line.size() || !is_ident_char(line[a + tag.size()]))) {
        first = line_start + static_cast<std::ptrdiff_t>(a + tag.size());
        break;
      }
      lines.push_back(std::move(line));
      if (it != last) ++it;
    }
    std::size_t indent = std::string::npos;
    for (const std::string& line : lines) {
      std::size_t a = line.find_first_not_of(" \t");
      if (a != std::string::npos) indent = std::min(indent, a);
    }
    std::string text;
    for (const std::string& line : lines) {
      text += line.size() > indent && indent != std::string::npos ? line.substr(indent) : "";
      text += '\n';
    }
    ast::StringLit result;
    result.heredoc = true;
    result.parts.emplace_back(std::move(text));
    if constexpr (!std::is_same_v<Attr, x3::unused_type>) attr = std::move(result);
    return true;
  }
};

/// `nested(c)[p]`: p, one nesting level deeper, where p starts with the opening character c.
/// Depth is counted by the grammar as it recurses (one lexer, one truth): a pre-scan that read
/// strings or heredocs differently once let 20,000 brackets through to overflow the stack.
template <typename Subject>
struct nesting_guard : x3::unary_parser<Subject, nesting_guard<Subject>> {
  using base_type = x3::unary_parser<Subject, nesting_guard<Subject>>;
  static bool const is_pass_through_unary = true;
  char opener;

  nesting_guard(const Subject& subject, char opener_) : base_type(subject), opener(opener_) {}

  template <typename It, typename Ctx, typename RCtx, typename Attr>
  bool parse(It& first, const It& last, const Ctx& ctx, RCtx& rctx, Attr& attr) const {
    ParseState& state = x3::get<state_tag>(ctx).get();
    if (state.depth >= limits::kMaxNestingDepth) {
      It at = first;
      x3::skip_over(at, last, ctx);
      if (at != last && *at == opener) throw x3::expectation_failure<It>(at, kNestingTooDeep);
      return false;
    }
    ++state.depth;
    struct Leave {
      std::size_t& depth;
      ~Leave() { --depth; }
    } leave{state.depth};
    It at = first;
    x3::skip_over(at, last, ctx);
    try {
      return this->subject.parse(first, last, ctx, rctx, attr);
    } catch (const x3::expectation_failure<It>& failure) {
      // The innermost bracket whose closer was expected names where it opened.
      const char closer = opener == '{' ? '}' : opener == '[' ? ']' : ')';
      if (state.unclosed == kNoPosition && failure.which() == std::string{'\'', closer, '\''}) {
        state.unclosed = static_cast<std::uint32_t>(at - state.base);
      }
      throw;
    }
  }
};

struct nested {
  char opener;
  template <typename Subject>
  auto operator[](const Subject& subject) const {
    return nesting_guard<typename x3::extension::as_parser<Subject>::value_type>{
        x3::as_parser(subject), opener};
  }
};

inline auto keyword(const char* word) {
  return x3::lexeme[x3::lit(word) >> !x3::char_("A-Za-z0-9_-")];
}

struct ident_str_class;
struct identifier_class : annotate_position {};
struct ref_class : annotate_position {};
struct number_class : annotate_position {};
struct bool_class : annotate_position {};
struct string_class : annotate_position {};
struct key_class : annotate_position {};
struct quoted_key_class;
struct ref_path_class;

const x3::rule<ident_str_class, std::string> ident_str = "identifier";
const x3::rule<identifier_class, ast::Identifier> identifier = "identifier";
const x3::rule<ref_path_class, std::vector<std::string>> ref_path = "reference";
const x3::rule<ref_class, ast::Ref> ref = "reference";
const x3::rule<number_class, ast::Number> number = "number";
const x3::rule<bool_class, ast::Bool> boolean = "boolean";
const x3::rule<string_class, ast::StringLit> string_lit = "string";
const x3::rule<quoted_key_class, std::string> quoted_key = "quoted key";
const x3::rule<key_class, ast::Key> key = "field name";

const auto ident_str_def = x3::lexeme[x3::raw[x3::char_("A-Za-z_") >> *x3::char_("A-Za-z0-9_-")]];
const auto identifier_def = ident_str;
const auto ref_path_def = ident_str % '.';
const auto ref_def = ref_path;
const auto number_def =
    x3::lexeme[x3::raw[-x3::lit('-') >> x3::char_("0-9") >> *x3::char_("0-9") >>
                       -(x3::lit('.') >> +x3::char_("0-9")) >> *x3::char_("A-Za-z0-9")]];
const auto boolean_def = x3::lexeme[x3::bool_ >> !x3::char_("A-Za-z0-9_-")];
const auto string_lit_def = quoted_string_parser{} | heredoc_parser{};
const auto quoted_key_def =
    x3::lexeme['"' >> *((x3::lit('\\') >> x3::char_("\"\\")) | ~x3::char_("\"\\\n")) >> '"'];
const auto key_def = (ident_str >> x3::attr(false)) | (quoted_key >> x3::attr(true));

BOOST_SPIRIT_DEFINE(ident_str, identifier, ref_path, ref, number, boolean, string_lit, quoted_key,
                    key)

}  // namespace mlenv::parse
