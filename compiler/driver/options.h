#pragma once
// A small, strict command-line reader shared by the subcommands: `--flag`, `--key=value`,
// `--key value`, positional arguments, and a clear error for anything unknown.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/driver/commands.h"

namespace mlenv::driver {

struct Options {
  std::map<std::string, std::vector<std::string>> values;  ///< `--key` → every value given
  std::set<std::string> flags;
  std::vector<std::string> positional;
  std::string error;  ///< set when the arguments are malformed

  bool flag(const std::string& name) const { return flags.count(name) != 0; }
  std::optional<std::string> value(const std::string& name) const;
};

/// Parses `args` given the flags (no value) and keys (with a value) a command accepts.
Options parse_options(const Args& args, const std::set<std::string>& flags,
                      const std::set<std::string>& keys);

/// Reads `--format=text|json`; returns false (after printing an error) for anything else.
bool json_format(const Options& options, bool& json);

}  // namespace mlenv::driver
