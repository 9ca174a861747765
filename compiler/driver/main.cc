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
    {"explain", "the long explanation of a diagnostic code", mlenv::driver::run_explain},
    {"build", "render the output tree (-o DIR) or object stream (-o -)", mlenv::driver::run_build},
    {"plan", "render, diff against the committed plan, commit it", mlenv::driver::run_plan},
    {"apply", "apply a committed, fresh plan with oc/kubectl", mlenv::driver::run_apply},
    {"results", "show an acceptance run's result", mlenv::driver::run_results},
    {"port-forward", "reach an env's tools (and debugpy) on this machine",
     mlenv::driver::run_port_forward},
};

void usage(std::ostream& out) {
  out << "usage: mlenvc <command> [options]\n\ncommands:\n";
  for (const Command& c : kCommands) {
    out << "  " << c.name << std::string(10 - c.name.size(), ' ') << c.summary << '\n';
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
