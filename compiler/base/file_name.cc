#include "compiler/base/file_name.h"

#include <cctype>

namespace mlenv {

std::string escape_file_name(std::string_view path) {
  static const char* hex = "0123456789ABCDEF";
  std::string name;
  for (unsigned char c : path) {
    if (std::isalnum(c) != 0 || c == '.' || c == '_' || c == '-') {
      name += static_cast<char>(c);
    } else {
      name += {'%', hex[c >> 4], hex[c & 15]};
    }
  }
  return name;
}

}  // namespace mlenv
