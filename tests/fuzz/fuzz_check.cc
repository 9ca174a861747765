// libFuzzer target over parse and check: any bytes must give diagnostics or a program, never
// a crash, a hang or unbounded memory. The input is the root file; it may import the stdlib.

#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/base/file_system.h"
#include "compiler/check/check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mlenv::MemoryFileSystem files;
  files.add("fuzz.mlenv", std::string(reinterpret_cast<const char*>(data), size));
  mlenv::SourceManager sources;
  mlenv::Diagnostics diagnostics;
  mlenv::check::check_program("fuzz.mlenv", files, sources, diagnostics);
  return 0;
}
