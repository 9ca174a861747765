#include <string>

#include "platforms/openapi/openapi.h"

namespace mlenv::openapi {

bool is_quantity(const std::string& s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::size_t digits = 0, dots = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) {
    (s[i] == '.' ? dots : digits)++;
    ++i;
  }
  if (digits == 0 || dots > 1) return false;
  std::string suffix = s.substr(i);
  static const char* kSuffixes[] = {"",  "n", "u",  "m",  "k",  "M",  "G",  "T",
                                    "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  for (const char* k : kSuffixes) {
    if (suffix == k) return true;
  }
  // Decimal exponent: e3, E-2.
  if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::size_t j = 1;
    if (suffix[j] == '+' || suffix[j] == '-') ++j;
    if (j >= suffix.size()) return false;
    for (; j < suffix.size(); ++j) {
      if (suffix[j] < '0' || suffix[j] > '9') return false;
    }
    return true;
  }
  return false;
}

}  // namespace mlenv::openapi
