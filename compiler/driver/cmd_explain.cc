// `mlenvc explain CODE|TYPE`: the long explanation of a diagnostic code, or a schema type.

#include <iostream>

#include "compiler/check/check.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/driver/commands.h"

namespace mlenv::driver {

int run_explain(const Args& args) {
  if (args.size() != 1 || args[0] == "--help") {
    std::ostream& out = args.size() == 1 ? std::cout : std::cerr;
    out << "usage: mlenvc explain CODE|TYPE\n\n"
           "  mlenvc explain E0302     the long explanation of a diagnostic code\n"
           "  mlenvc explain cluster   a schema or enum, with its documentation\n"
           "  mlenvc explain --list    every code with its summary\n";
    return args.size() == 1 ? 0 : 1;
  }
  if (args[0] == "--list") {
    for (const CodeInfo& info : all_codes()) std::cout << info.id << "  " << info.summary << '\n';
    return 0;
  }
  if (const CodeInfo* info = find_code(args[0])) {
    std::cout << info->id << ": " << info->summary << '\n' << info->explanation;
    return 0;
  }
  if (std::string type = check::describe_type(args[0]); !type.empty()) {
    std::cout << type;
    return 0;
  }
  std::cerr << "mlenvc explain: `" << args[0]
            << "` is neither a diagnostic code nor a schema type (try `mlenvc explain --list`)\n";
  return 1;
}

}  // namespace mlenv::driver
