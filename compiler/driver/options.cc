#include "compiler/driver/options.h"

#include <iostream>

namespace mlenv::driver {

std::optional<std::string> Options::value(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

Options parse_options(const Args& args, const std::set<std::string>& flags,
                      const std::set<std::string>& keys) {
  Options options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      options.positional.insert(options.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      options.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(arg.find_first_not_of('-'));
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (flags.count(name) && !inline_value) {
      options.flags.insert(name);
    } else if (keys.count(name)) {
      if (!inline_value && i + 1 >= args.size()) {
        options.error = "option `--" + name + "` needs a value";
        return options;
      }
      options.values[name].push_back(inline_value ? *inline_value : args[++i]);
    } else {
      options.error = "unknown option `" + arg + "`";
      return options;
    }
  }
  return options;
}

bool json_format(const Options& options, bool& json) {
  std::string format = options.value("format").value_or("text");
  if (format != "text" && format != "json") {
    std::cerr << "mlenvc: --format is `text` or `json`, not `" << format << "`\n";
    return false;
  }
  json = format == "json";
  return true;
}

}  // namespace mlenv::driver
