// libFuzzer target over the front end and the back ends: any bytes must give diagnostics or a
// program, never a crash, a hang or unbounded memory. The input is the root file; it may import
// the stdlib. What parses is formatted (`mlenvc fmt`), and a program that checks is rendered
// as a whole tree by the target of each cluster's platform (`mlenvc build`, `plan`).

#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/base/file_system.h"
#include "compiler/check/check.h"
#include "compiler/parse/parser.h"
#include "compiler/syntax/format.h"
#include "targets/provider.h"
#include "targets/target.h"

namespace {

void format(const std::string& text) {
  mlenv::SourceManager sources;
  mlenv::Diagnostics diagnostics;
  mlenv::FileId file = sources.add("fuzz.mlenv", text);
  mlenv::ast::File tree = mlenv::parse::parse_file(file, sources.file(file).text(), diagnostics);
  if (!diagnostics.has_errors()) mlenv::syntax::format_file(text, tree);
}

void check_and_render(const std::string& text) {
  mlenv::MemoryFileSystem files;
  files.add("fuzz.mlenv", text);
  mlenv::SourceManager sources;
  mlenv::Diagnostics diagnostics;
  auto program = mlenv::check::check_program("fuzz.mlenv", files, sources, diagnostics,
                                             mlenv::target::check_rules());
  if (!program || diagnostics.has_errors()) return;
  mlenv::target::make_program_target()->render(*program, diagnostics, mlenv::target::Scope::Tree);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  format(text);
  check_and_render(text);
  return 0;
}
