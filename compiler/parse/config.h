#pragma once
// The one iterator, skipper and context type every grammar translation unit is instantiated
// with (a mismatch shows up as an undefined parse_rule at link time).

#include <algorithm>
#include <vector>

#include <boost/spirit/home/x3.hpp>

#include "compiler/syntax/ast.h"

namespace mlenv::parse {

namespace x3 = boost::spirit::x3;

/// No byte offset: no source file reaches 4 GiB (limits.h).
inline constexpr std::uint32_t kNoPosition = 0xFFFFFFFF;

/// Per-parse state reachable from every rule: the start of the text, for byte offsets, and
/// the file's comments (sorted), so node ranges can be trimmed of trailing trivia.
struct ParseState {
  const char* base = nullptr;
  const std::vector<ast::Located>* comments = nullptr;
  /// Blocks, lists and type arguments open around the parser's position: the grammar itself
  /// enforces the nesting limit, so no separate scan can read the text differently.
  std::size_t depth = 0;
  /// Where the innermost block or list whose closing bracket was expected and missing opened.
  std::uint32_t unclosed = kNoPosition;

  /// `end` moved back over whitespace and comments: a failed optional element pre-skips
  /// before it fails, and X3 does not give that trivia back.
  std::uint32_t trim(std::uint32_t begin, std::uint32_t end) const {
    for (;;) {
      while (end > begin && (base[end - 1] == ' ' || base[end - 1] == '\t' ||
                             base[end - 1] == '\n' || base[end - 1] == '\r')) {
        --end;
      }
      auto it = std::lower_bound(comments->begin(), comments->end(), end,
                                 [](const ast::Located& c, std::uint32_t e) { return c.end < e; });
      if (it == comments->end() || it->end != end || it->begin < begin) return end;
      end = it->begin;
    }
  }

  /// `begin` moved forward over whitespace and comments, which X3 may include before a node.
  std::uint32_t skip(std::uint32_t begin, std::uint32_t end) const {
    for (;;) {
      while (begin < end && (base[begin] == ' ' || base[begin] == '\t' || base[begin] == '\n' ||
                             base[begin] == '\r')) {
        ++begin;
      }
      auto it =
          std::lower_bound(comments->begin(), comments->end(), begin,
                           [](const ast::Located& c, std::uint32_t b) { return c.begin < b; });
      if (it == comments->end() || it->begin != begin || it->end > end) return begin;
      begin = it->end;
    }
  }
};
struct state_tag;

using iterator_type = const char*;

// Whitespace and comments. Spelled with explicit character sets so that bytes >= 0x80 (UTF-8)
// never reach the C character classification functions. A `#` comment is skipped too, after
// the parse driver's scan has reported it (E0101), so it costs one error and no cascade.
inline const auto skipper = x3::char_(" \t\r\n\f\v") | (x3::lit("//") >> *(x3::char_ - x3::eol)) |
                            (x3::lit('#') >> *(x3::char_ - x3::eol)) |
                            (x3::lit("/*") >> *(x3::char_ - x3::lit("*/")) >> x3::lit("*/"));
using skipper_type = std::remove_cv_t<decltype(skipper)>;

using phrase_context_type = x3::phrase_parse_context<skipper_type>::type;
using context_type =
    x3::context<state_tag, std::reference_wrapper<ParseState>, phrase_context_type>;

}  // namespace mlenv::parse
