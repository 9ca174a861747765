// `mlenvc fmt [--check | -w] FILE...`: the canonical formatting.

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "compiler/base/atomic_file.h"
#include "compiler/base/file_system.h"
#include "compiler/diag/render.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"
#include "compiler/parse/parser.h"
#include "compiler/syntax/format.h"

namespace mlenv::driver {
namespace {

// Replaces the source with its formatted text through a temporary file renamed over it, with
// its permission bits: a full disk once cut a source to 4,096 bytes and exited 0. A link is
// followed to the file it names, which is the one rewritten.
bool rewrite(const std::string& path, const std::string& formatted) {
  std::error_code ec;
  std::filesystem::path file = std::filesystem::canonical(path, ec);
  struct stat st {};
  std::string error;
  if (ec || ::stat(file.c_str(), &st) != 0) {
    error = ec ? ec.message() : std::strerror(errno);
  } else if (write_file_atomic(file.string(), formatted, st.st_mode & 07777, error)) {
    return true;
  }
  std::cerr << "mlenvc fmt: cannot rewrite `" << path << "`: " << error << '\n';
  return false;
}

}  // namespace

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
    // Confined as check is: `fmt --check $(git ls-files)` must not print a linked secret.
    auto text = disk.read_inside(path, program_folders(path, {}), error);
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
      if (formatted != *text && !rewrite(path, formatted)) status = 1;
    } else {
      std::cout << formatted;
    }
  }
  return status;
}

}  // namespace mlenv::driver
