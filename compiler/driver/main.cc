// mlenvc: the mlenv compiler's command line.

#include <cstring>
#include <iostream>
#include <string_view>

#include "compiler/base/version.h"
#include "compiler/driver/commands.h"

namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const mlenv::driver::Args&);
};

constexpr Command kCommands[] = {
    {"check", "parse, type-check and apply the rules; no output", mlenv::driver::run_check},
    {"fmt", "print or check the canonical formatting", mlenv::driver::run_fmt},
    {"explain", "explain a diagnostic code or a schema; `explain std` lists the stdlib",
     mlenv::driver::run_explain},
    {"lsp", "the language server for editors, over stdin and stdout", mlenv::driver::run_lsp},
    {"get", "fetch the git imports into .mlenv/ and pin them in mlenv.lock",
     mlenv::driver::run_get},
    {"build", "render the output tree (-o DIR) or object stream (-o -)", mlenv::driver::run_build},
    {"plan", "render, diff against the committed plan, commit it", mlenv::driver::run_plan},
    {"apply", "apply a committed, fresh plan through each env's platform",
     mlenv::driver::run_apply},
    {"destroy", "delete an applied env from its cluster", mlenv::driver::run_destroy},
    {"results", "show an acceptance run's result", mlenv::driver::run_results},
    {"status", "each rank's pod (or Slurm node), phase and transport; the build; the URLs",
     mlenv::driver::run_status},
    {"shell", "a shell in a rank's pod, or on its node", mlenv::driver::run_shell},
    {"logs", "every rank's log, each line prefixed with its rank", mlenv::driver::run_logs},
    {"sync", "copy a directory into /workspace of the pods (--watch: on every change)",
     mlenv::driver::run_sync},
    {"port-forward", "forward a local port to debugpy or a service in rank 0's pod",
     mlenv::driver::run_port_forward},
    {"urls", "the env's URLs (OpenShift Routes), else each tool's port-forward",
     mlenv::driver::run_urls},
    {"dev-session", "debugpy forwarded and a directory synced on every change, until Ctrl-C",
     mlenv::driver::run_dev_session},
};

void usage(std::ostream& out) {
  out << "usage: mlenvc <command> [options]\n\ncommands:\n";
  for (const Command& c : kCommands) {
    out << "  " << c.name << std::string(14 - c.name.size(), ' ') << c.summary << '\n';
  }
  out << "\n`mlenvc <command> --help` for a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return 1;
  }
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(std::cout);
    return 0;
  }
  if (name == "--version" || name == "version") {
    std::cout << "mlenvc " << mlenv::kCompilerVersion << '\n';
    return 0;
  }
  for (const Command& c : kCommands) {
    if (c.name == name) return c.run(mlenv::driver::Args(argv + 2, argv + argc));
  }
  std::cerr << "mlenvc: unknown command `" << name << "`\n";
  usage(std::cerr);
  return 1;
}
