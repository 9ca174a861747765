// `mlenvc lsp`: the language server (compiler/lsp/), over stdin and stdout.

#include <iostream>

#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"
#include "compiler/lsp/server.h"

namespace mlenv::driver {

int run_lsp(const Args& args) {
  Options options = parse_options(args, {"help", "stdio"}, {"stdlib-cache"});
  const char* usage =
      "usage: mlenvc lsp [--stdio] [--stdlib-cache=DIR]\n\n"
      "Serves the Language Server Protocol over stdin and stdout: diagnostics (those of\n"
      "`mlenvc check`), hover, go to definition, completion, formatting and document symbols.\n"
      "Definitions in the stdlib open its read-only copy in DIR (default\n"
      "$XDG_CACHE_HOME/mlenvc/VERSION, else ~/.cache/mlenvc/VERSION, else\n"
      "$XDG_RUNTIME_DIR/mlenvc/VERSION, else a new private folder).\n";
  if (options.flag("help")) {
    std::cout << usage;
    return 0;
  }
  if (!options.error.empty() || !options.positional.empty()) {
    std::cerr << "mlenvc lsp: " << (options.error.empty() ? "unexpected argument" : options.error)
              << '\n'
              << usage;
    return 1;
  }
  std::string cache = options.value("stdlib-cache").value_or("");
  std::ios::sync_with_stdio(false);
  lsp::Server server(cache.empty() ? lsp::default_stdlib_cache() : cache, std::cout);
  return server.run(std::cin);
}

}  // namespace mlenv::driver
