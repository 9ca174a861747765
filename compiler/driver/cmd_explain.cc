// `mlenvc explain CODE|TYPE|std`: the long explanation of a diagnostic code, a schema type,
// or the list of the standard library.

#include <iostream>

#include "compiler/check/check.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"

namespace mlenv::driver {

int run_explain(const Args& args) {
  Options options = parse_options(args, {"help", "list"}, {});
  bool list = options.flag("list") && options.positional.empty();
  if (options.flag("help") || !options.error.empty() || (!list && options.positional.size() != 1)) {
    bool asked = options.flag("help") && options.error.empty();
    if (!options.error.empty()) std::cerr << "mlenvc explain: " << options.error << "\n\n";
    (asked ? std::cout : std::cerr)
        << "usage: mlenvc explain CODE|TYPE|std\n\n"
           "  mlenvc explain E0302     the long explanation of a diagnostic code\n"
           "  mlenvc explain cluster   a schema or enum, with its documentation\n"
           "  mlenvc explain std       every profile, image and network of the standard library\n"
           "  mlenvc explain --list    every code with its summary\n";
    return asked ? 0 : 1;
  }
  if (list) {
    for (const CodeInfo& info : all_codes()) std::cout << info.id << "  " << info.summary << '\n';
    return 0;
  }
  const std::string& name = options.positional[0];
  if (name == "std") {
    std::cout << check::describe_stdlib();
    return 0;
  }
  if (const CodeInfo* info = find_code(name)) {
    std::cout << info->id << ": " << info->summary << '\n' << info->explanation;
    return 0;
  }
  if (std::string type = check::describe_type(name); !type.empty()) {
    std::cout << type;
    return 0;
  }
  std::cerr << "mlenvc explain: `" << name
            << "` is neither a diagnostic code nor a schema type (try `mlenvc explain --list`)\n";
  return 1;
}

}  // namespace mlenv::driver
