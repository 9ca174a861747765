#pragma once
// Source files, byte ranges and line/column lookup. Every later phase refers to source text
// only through SourceRange, so diagnostics can be rendered at the edge.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mlenv {

/// Index of a file in a SourceManager; 0 means "no file".
using FileId = std::uint32_t;

/// A half-open byte range [begin, end) in one file.
struct SourceRange {
  FileId file = 0;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;

  bool valid() const { return file != 0; }
  friend bool operator==(const SourceRange&, const SourceRange&) = default;
};

/// The UTF-8 byte order mark Windows editors write at the start of a file. A source may begin
/// with it; the parser skips it and columns on line 1 do not count it.
inline constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

/// The length of the byte order mark `text` starts with: 3 or 0.
inline std::size_t byte_order_mark_size(std::string_view text) {
  return text.starts_with(kByteOrderMark) ? kByteOrderMark.size() : 0;
}

/// A 1-based line and column (column counted in bytes).
struct LineColumn {
  std::uint32_t line = 1;
  std::uint32_t column = 1;
};

/// The text of one loaded file and the offsets at which its lines start.
class SourceFile {
 public:
  SourceFile(std::string path, std::string text, std::string origin = {});

  const std::string& path() const { return path_; }
  /// Where a fetched file came from, for diagnostics (`` `p.mlenv` at a1b2c3d of git::URL``);
  /// "" for the user's own files.
  const std::string& origin() const { return origin_; }
  const std::string& text() const { return text_; }
  /// Line and column of a byte offset (clamped to the end of the file).
  LineColumn position(std::uint32_t offset) const;
  /// The text of a 1-based line, without its newline.
  std::string_view line(std::uint32_t line) const;
  std::uint32_t line_count() const { return static_cast<std::uint32_t>(line_starts_.size()); }

 private:
  std::string path_;
  std::string text_;
  std::string origin_;
  std::vector<std::uint32_t> line_starts_;
};

/// Owns every loaded file; FileIds stay valid for the manager's lifetime.
class SourceManager {
 public:
  FileId add(std::string path, std::string text, std::string origin = {});
  const SourceFile& file(FileId id) const { return *files_.at(id - 1); }
  std::string_view text(SourceRange range) const;

 private:
  std::vector<std::unique_ptr<SourceFile>> files_;
};

}  // namespace mlenv
