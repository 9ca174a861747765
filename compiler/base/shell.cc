#include "compiler/base/shell.h"

#include <algorithm>

namespace mlenv {

std::string shell_quote(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool is_plain_shell_word(std::string_view value) {
  constexpr std::string_view kPlainPunctuation = "-_./:=+@,%";
  return !value.empty() && std::all_of(value.begin(), value.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           kPlainPunctuation.find(c) != std::string_view::npos;
  });
}

std::string shell_word(std::string_view value) {
  return is_plain_shell_word(value) ? std::string(value) : shell_quote(value);
}

}  // namespace mlenv
