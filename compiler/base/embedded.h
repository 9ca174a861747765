#pragma once
// Files compiled into the binary by cmake/Embed.cmake (schema/ and stdlib/).

#include <cstddef>
#include <string_view>

namespace mlenv {

/// One embedded file: its path relative to the embedded root, and its bytes.
struct EmbeddedFile {
  std::string_view path;
  std::string_view bytes;
};

}  // namespace mlenv
