#include "compiler/base/source.h"

#include <algorithm>

namespace mlenv {

SourceFile::SourceFile(std::string path, std::string text, std::string origin)
    : path_(std::move(path)), text_(std::move(text)), origin_(std::move(origin)) {
  line_starts_.push_back(0);
  for (std::uint32_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

LineColumn SourceFile::position(std::uint32_t offset) const {
  offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(text_.size()));
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  auto line = static_cast<std::uint32_t>(it - line_starts_.begin());
  std::uint32_t column = offset - line_starts_[line - 1] + 1;
  // An editor shows the first character after a byte order mark at column 1.
  auto mark = static_cast<std::uint32_t>(byte_order_mark_size(text_));
  if (line == 1 && column > mark) column -= mark;
  return {line, column};
}

std::string_view SourceFile::line(std::uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  std::uint32_t begin = line_starts_[line - 1];
  std::uint32_t end = line < line_starts_.size() ? line_starts_[line] - 1
                                                 : static_cast<std::uint32_t>(text_.size());
  std::string_view view(text_);
  view = view.substr(begin, end - begin);
  if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
  return view;
}

FileId SourceManager::add(std::string path, std::string text, std::string origin) {
  files_.push_back(
      std::make_unique<SourceFile>(std::move(path), std::move(text), std::move(origin)));
  return static_cast<FileId>(files_.size());
}

std::string_view SourceManager::text(SourceRange range) const {
  if (!range.valid()) return {};
  std::string_view all = file(range.file).text();
  if (range.begin > all.size()) return {};
  return all.substr(range.begin, range.end - range.begin);
}

}  // namespace mlenv
