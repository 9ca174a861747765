#pragma once
// The wire of the Language Server Protocol: JSON-RPC messages framed by a `Content-Length`
// header, positions counted in UTF-16 code units, documents named by `file://` URIs.

#include <cstddef>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace mlenv::lsp {

/// The largest message body read (a whole document rides in one didChange).
inline constexpr std::size_t kMaxMessageBytes = 64u << 20;
/// The longest header line read: the protocol's two headers fit in a hundred bytes.
inline constexpr std::size_t kMaxHeaderLineBytes = 4096;

/// Reads the body of one message; nullopt at the end of the input or on a broken header (one
/// with a line longer than kMaxHeaderLineBytes: no more of it is read).
std::optional<std::string> read_message(std::istream& in);
/// Writes `body` framed by its `Content-Length` header and flushes.
void write_message(std::ostream& out, std::string_view body);

/// A place as the protocol counts it: 0-based line, UTF-16 code units from the line's start.
struct Position {
  int line = 0;
  int character = 0;
};

/// The position of byte `offset` of `text` (clamped to the text's end).
Position position_of(std::string_view text, std::size_t offset);
/// The byte offset of `position` in `text`, clamped to its line's end and the text's end; a
/// position inside a character's UTF-8 bytes lands on the character's first byte.
std::size_t offset_of(std::string_view text, Position position);

/// The path a `file://` URI names, percent-decoded; "" for another scheme.
std::string path_of_uri(std::string_view uri);
/// The `file://` URI of an absolute path, percent-encoding what a URI may not hold.
std::string uri_of_path(std::string_view path);

}  // namespace mlenv::lsp
