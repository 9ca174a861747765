#include "compiler/base/duration.h"

#include <limits>
#include <utility>

namespace mlenv {
namespace {

// The unit at the start of `rest` in milliseconds, with its length; {0, 0} when none.
std::pair<std::int64_t, std::size_t> unit_at(std::string_view rest) {
  if (rest.starts_with("ms")) return {1, 2};
  if (rest.starts_with('h')) return {3'600'000, 1};
  if (rest.starts_with('m')) return {60'000, 1};
  if (rest.starts_with('s')) return {1'000, 1};
  return {0, 0};
}

}  // namespace

std::optional<std::int64_t> parse_duration_ms(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t digits = i;
    std::int64_t count = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (i - digits == 12) return std::nullopt;
      count = count * 10 + (text[i] - '0');
    }
    if (i == digits) return std::nullopt;
    auto [unit, length] = unit_at(text.substr(i));
    if (length == 0) return std::nullopt;
    i += length;
    // Twelve digits times an hour fits; the sum of many such parts must not overflow.
    if (count * unit > std::numeric_limits<std::int64_t>::max() - total) return std::nullopt;
    total += count * unit;
  }
  return total;
}

}  // namespace mlenv
