#pragma once
// What the day-2 command lines share: the env, --kubectl, --timeout, --rank, and printing the
// diagnostics of a run.

#include <optional>
#include <string>

#include "compiler/day2/commands.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/driver/options.h"

namespace mlenv::driver {

/// How a day-2 command line reads.
struct CommandLine {
  const char* command;  ///< `status`
  const char* usage;
  std::size_t min_args;  ///< positional arguments, the env first
  std::size_t max_args;
  const char* default_timeout;
};

/// Fills `target` from the env (the first positional argument, "" when none), --kubectl and
/// --timeout; prints the error and the usage to stderr and returns false when the options or
/// the number of arguments are wrong.
bool read_target(const Options& options, const CommandLine& line, plan::day2::EnvRequest& target);

/// Prints `message` and `usage` for `command` to stderr; returns 1.
int usage_error(const char* command, const std::string& message, const char* usage);

/// --rank N as a number (0 when absent); nullopt after printing an error.
std::optional<int> read_rank(const Options& options, const char* command, const char* usage);

/// --context NAME ("" when absent), a kubeconfig context name that can never become another
/// option (plan::valid_context_name); nullopt after printing an error.
std::optional<std::string> read_context(const Options& options, const char* command);

/// --local PORT as a port, 1 to 65535; nullopt after printing an error.
std::optional<int> read_port(const Options& options, const char* command, const char* usage);

/// Prints the diagnostics to stderr and returns `status`.
int finish(int status, const Diagnostics& diagnostics);

}  // namespace mlenv::driver
