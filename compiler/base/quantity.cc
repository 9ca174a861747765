#include "compiler/base/quantity.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace mlenv {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Every decimal exponent beyond this already makes any mantissa infinite or zero in a long
// double, so larger ones are clamped while they are read rather than overflow an int.
constexpr int kExponentClamp = 10000;

// Reads a suffix into a power of 2 and a power of 10; false where it is none of quantity.go's.
bool read_suffix(std::string_view suffix, int& binary, int& decimal) {
  static const std::array<std::pair<std::string_view, std::pair<int, int>>, 16> kSuffixes = {{
      {"", {0, 0}},
      {"Ki", {10, 0}},
      {"Mi", {20, 0}},
      {"Gi", {30, 0}},
      {"Ti", {40, 0}},
      {"Pi", {50, 0}},
      {"Ei", {60, 0}},
      {"n", {0, -9}},
      {"u", {0, -6}},
      {"m", {0, -3}},
      {"k", {0, 3}},
      {"M", {0, 6}},
      {"G", {0, 9}},
      {"T", {0, 12}},
      {"P", {0, 15}},
      {"E", {0, 18}},
  }};
  for (const auto& [name, powers] : kSuffixes) {
    if (suffix == name) {
      binary = powers.first;
      decimal = powers.second;
      return true;
    }
  }
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return false;
  std::size_t i = 1;
  bool negative = suffix[i] == '-';
  if (suffix[i] == '+' || suffix[i] == '-') ++i;
  if (i == suffix.size()) return false;
  int exponent = 0;
  for (; i < suffix.size(); ++i) {
    if (!is_digit(suffix[i])) return false;
    exponent = std::min(exponent * 10 + (suffix[i] - '0'), kExponentClamp);
  }
  binary = 0;
  decimal = negative ? -exponent : exponent;
  return true;
}

}  // namespace

std::optional<long double> parse_quantity(std::string_view text) {
  std::size_t i = 0;
  bool negative = i < text.size() && text[i] == '-';
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  // The digits as one integer mantissa and a decimal exponent for the fraction, so that
  // `1.1G` is 11 x 10^8, exactly what `1100M` is. Digits past kMantissaLimit only move the
  // exponent (or are dropped, in a fraction), so a 30,000-digit number stays finite.
  constexpr long double kMantissaLimit = 1e30L;
  long double mantissa = 0;
  int exponent = 0;
  std::size_t digits = 0;
  for (; i < text.size() && is_digit(text[i]); ++i, ++digits) {
    if (mantissa < kMantissaLimit) {
      mantissa = mantissa * 10 + (text[i] - '0');
    } else {
      exponent = std::min(exponent + 1, kExponentClamp);
    }
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && is_digit(text[i]); ++i, ++digits) {
      if (mantissa >= kMantissaLimit) continue;
      mantissa = mantissa * 10 + (text[i] - '0');
      --exponent;
    }
  }
  int binary = 0, decimal = 0;
  if (digits == 0 || !read_suffix(text.substr(i), binary, decimal)) return std::nullopt;
  if (mantissa == 0) return negative ? -0.0L : 0.0L;  // 0 x 10^huge is 0, not NaN
  int power = exponent + decimal;
  long double value =
      power >= 0 ? mantissa * std::pow(10.0L, power) : mantissa / std::pow(10.0L, -power);
  value = std::ldexp(value, binary);
  return negative ? -value : value;
}

bool is_quantity(std::string_view text) {
  return parse_quantity(text).has_value();
}

std::optional<std::int64_t> quantity_integer(std::string_view text) {
  std::optional<long double> value = parse_quantity(text);
  if (!value) return std::nullopt;
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  // 2^63 is the first long double past INT64_MAX; comparing against it avoids rounding kMax.
  if (*value >= 0x1p63L) return kMax;
  if (*value <= 0) return 0;
  return static_cast<std::int64_t>(std::ceil(*value));
}

}  // namespace mlenv
