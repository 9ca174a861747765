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

/// schema/*.mlenv, paths relative to schema/ (compiler/check reads them).
extern const EmbeddedFile kSchemaFiles[];
extern const std::size_t kSchemaFiles_count;
/// stdlib/**.mlenv, paths relative to stdlib/ (`std/...` imports).
extern const EmbeddedFile kStdlibFiles[];
extern const std::size_t kStdlibFiles_count;

}  // namespace mlenv
