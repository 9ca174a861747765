// `mlenvc explain std`: every declaration of the embedded standard library with the first
// sentence of its own documentation, so the stdlib can be found without reading its files.

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/base/embedded.h"
#include "compiler/check/check.h"
#include "compiler/parse/parser.h"

namespace mlenv::check {
namespace {

// The first sentence of a comment whose lines were wrapped: joined, cut after the first `.`
// that ends a sentence.
std::string first_sentence(std::string_view text) {
  std::string joined;
  for (char c : text) joined += c == '\n' ? ' ' : c;
  for (std::size_t at = joined.find(". "); at != std::string::npos;
       at = joined.find(". ", at + 1)) {
    // `e.g. ` and `4x H100 80GB (SXM, HBM3).` aside, a sentence ends at `. ` after a word.
    if (at > 0 && joined[at - 1] != '.') return joined.substr(0, at + 1);
  }
  return joined;
}

// The `//` comment a file opens with, without its markers.
std::string file_comment(std::string_view text) {
  std::string comment;
  while (text.starts_with("//") && !text.starts_with("///")) {
    std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(2, end - 2);
    if (line.starts_with(" ")) line.remove_prefix(1);
    comment += (comment.empty() ? "" : "\n") + std::string(line);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return comment;
}

std::string describe_file(const EmbeddedFile& embedded) {
  std::string import(embedded.path.substr(0, embedded.path.rfind(".mlenv")));
  std::string qualifier = import.substr(import.rfind('/') + 1);
  std::string out = "import \"" + import + "\"\n";
  if (std::string about = file_comment(embedded.bytes); !about.empty()) {
    out += "  " + first_sentence(about) + "\n";
  }
  SourceManager sources;
  Diagnostics diagnostics;
  FileId file = sources.add(std::string(embedded.path), std::string(embedded.bytes));
  ast::File tree = parse::parse_file(file, sources.file(file).text(), diagnostics);
  for (const ast::Item& item : tree.items) {
    const auto* decl = boost::get<ast::Decl>(&item);
    if (!decl) continue;
    std::string name = decl->kind.name + " " + qualifier + "." + decl->name.name;
    out += "    " + name + std::string(name.size() < 28 ? 28 - name.size() : 1, ' ') +
           first_sentence(decl->doc) + "\n";
  }
  return out;
}

}  // namespace

std::string describe_stdlib() {
  std::vector<const EmbeddedFile*> files;
  for (std::size_t i = 0; i < kStdlibFiles_count; ++i) files.push_back(&kStdlibFiles[i]);
  std::sort(files.begin(), files.end(),
            [](const EmbeddedFile* a, const EmbeddedFile* b) { return a->path < b->path; });
  std::string out =
      "The standard library, embedded in mlenvc. Import a file, then name its declarations by\n"
      "the file's last path segment (`import \"std/profiles/h100\"`, `extends h100.node8`).\n";
  for (const EmbeddedFile* file : files) out += "\n" + describe_file(*file);
  return out;
}

}  // namespace mlenv::check
