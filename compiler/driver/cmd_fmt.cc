// `mlenvc fmt [--check | -w] FILE...`: the canonical formatting.

#include <fstream>
#include <iostream>

#include "compiler/base/file_system.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"
#include "compiler/parse/parser.h"
#include "compiler/syntax/format.h"

namespace mlenv::driver {

int run_fmt(const Args& args) {
  Options options = parse_options(args, {"help", "check", "w"}, {});
  const char* usage =
      "usage: mlenvc fmt [--check | -w] FILE...\n\n"
      "Prints each file in canonical form. --check lists the files that would change and exits\n"
      "1 if any would; -w rewrites them in place.\n";
  if (options.flag("help")) {
    std::cout << usage;
    return 0;
  }
  if (!options.error.empty() || options.positional.empty() ||
      (options.flag("check") && options.flag("w"))) {
    std::cerr << "mlenvc fmt: "
              << (options.error.empty() ? options.positional.empty()
                                              ? "no input file"
                                              : "--check and -w exclude each other"
                                        : options.error)
              << '\n'
              << usage;
    return 1;
  }
  DiskFileSystem disk;
  int status = 0;
  for (const std::string& path : options.positional) {
    std::string error;
    auto text = disk.read(path, error);
    if (!text) {
      std::cerr << "mlenvc fmt: cannot read `" << path << "`: " << error << '\n';
      status = 1;
      continue;
    }
    SourceManager sources;
    Diagnostics diagnostics;
    FileId file = sources.add(path, *text);
    ast::File tree = parse::parse_file(file, sources.file(file).text(), diagnostics);
    if (diagnostics.has_errors()) {
      for (const Diagnostic& d : diagnostics.all()) render_text(std::cerr, sources, d);
      status = 1;
      continue;
    }
    std::string formatted = syntax::format_file(*text, tree);
    if (options.flag("check")) {
      if (formatted != *text) {
        std::cout << path << '\n';
        status = 1;
      }
    } else if (options.flag("w")) {
      if (formatted != *text) std::ofstream(path, std::ios::binary) << formatted;
    } else {
      std::cout << formatted;
    }
  }
  return status;
}

}  // namespace mlenv::driver
