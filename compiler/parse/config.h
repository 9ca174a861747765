#pragma once
// The one iterator, skipper and context type every grammar translation unit is instantiated
// with (a mismatch shows up as an undefined parse_rule at link time).

#include <boost/spirit/home/x3.hpp>

namespace mlenv::parse {

namespace x3 = boost::spirit::x3;

/// Per-parse state reachable from every rule: the start of the text, for byte offsets.
struct ParseState {
  const char* base = nullptr;
};
struct state_tag;

using iterator_type = const char*;

// Whitespace and comments. Spelled with explicit character sets so that bytes >= 0x80 (UTF-8)
// never reach the C character classification functions.
inline const auto skipper = x3::char_(" \t\r\n\f\v") |
                            (x3::lit("//") >> *(x3::char_ - x3::eol)) |
                            (x3::lit("/*") >> *(x3::char_ - x3::lit("*/")) >> x3::lit("*/"));
using skipper_type = std::remove_cv_t<decltype(skipper)>;

using phrase_context_type = x3::phrase_parse_context<skipper_type>::type;
using context_type =
    x3::context<state_tag, std::reference_wrapper<ParseState>, phrase_context_type>;

}  // namespace mlenv::parse
