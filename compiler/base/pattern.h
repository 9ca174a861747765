#pragma once
// Linear-time regular expressions for user data. std::regex backtracks recursively and
// overflowed the stack on a 30,000-digit quantity or a 60,000-character label; this is a
// Thompson NFA simulated state set by state set (Pike VM without captures, as in Russ Cox,
// "Regular Expression Matching: the Virtual Machine Approach", 2009), so matching takes
// O(text length x pattern size) time, O(pattern size) memory, and no recursion on the text.
//
// The subset is what schema/*.mlenv refinements and the compiler's own patterns use: literal
// bytes, escapes (`\d \D \w \W \s \S \n \t \r \f \v`, `\` before any other punctuation),
// classes `[a-z_]` and `[^/]`, `.` (any byte but newline), groups `( )` and `(?: )`, `|`,
// `?`, `*`, `+`, `{m}`, `{m,}`, `{m,n}` and the anchors `^` and `$`. Matching is by bytes, as
// std::regex over `char` was. No backreferences, lookaround or lazy quantifiers.

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlenv {

class Pattern {
 public:
  /// Compiles `source`; std::nullopt with `*error` set where it is not in the subset above or
  /// expands past the size limit (counted repetitions are copied).
  static std::optional<Pattern> compile(std::string_view source, std::string* error = nullptr,
                                        bool ignore_case = false);
  /// Compiles a pattern written in the compiler's own source; throws std::logic_error if it is
  /// invalid (a programming error, caught by the unit tests).
  static Pattern literal(std::string_view source, bool ignore_case = false);

  /// True where the whole of `text` matches (as std::regex_match).
  bool matches(std::string_view text) const;
  /// True where some substring of `text` matches (as std::regex_search).
  bool search(std::string_view text) const;

  struct Instruction {
    enum class Op : std::uint8_t { Byte, Split, Jump, Begin, End, Match };
    Op op = Op::Match;
    std::uint32_t x = 0;  ///< Split: first branch; Jump: target
    std::uint32_t y = 0;  ///< Split: second branch
    std::bitset<256> bytes;
  };

 private:
  bool run(std::string_view text, bool anchored) const;

  std::vector<Instruction> program_;
};

}  // namespace mlenv
