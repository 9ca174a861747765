// `mlenvc check FILE...`: parse, type-check and apply the rules; print diagnostics only.

#include <iostream>

#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"
#include "compiler/driver/pipeline.h"
#include "targets/target.h"

namespace mlenv::driver {

int run_check(const Args& args) {
  Options options = parse_options(args, {"help"}, {"format"});
  if (options.flag("help")) {
    std::cout
        << "usage: mlenvc check [--format=text|json] FILE...\n\n"
           "Checks each file and everything it imports, including the rules that need the\n"
           "emitted objects; writes nothing. Exit status: 0 clean (warnings allowed), 1 errors.\n";
    return 0;
  }
  bool json = false;
  if (!options.error.empty() || options.positional.empty()) {
    std::cerr << "mlenvc check: " << (options.error.empty() ? "no input file" : options.error)
              << "\nusage: mlenvc check [--format=text|json] FILE...\n";
    return 1;
  }
  if (!json_format(options, json)) return 1;
  DiskFileSystem disk;
  int status = 0;
  for (const std::string& path : options.positional) {
    // The rules that need emitted objects run too; the rendered files are dropped.
    std::vector<std::string> notes;
    auto compilation = check_file(path, disk, notes);
    print_diagnostics(*compilation, json);
    // What the cluster needs (controllers, Pod Security); JSON lines hold diagnostics only.
    if (compilation->program && !json) {
      target::Output out;
      out.notes = std::move(notes);
      print_notes(out);
    }
    if (!compilation->program) status = 1;
  }
  return status;
}

}  // namespace mlenv::driver
