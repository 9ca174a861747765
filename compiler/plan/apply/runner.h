#pragma once
// Running oc/kubectl: fork and exec, no shell, stdin from memory, a deadline. The child
// inherits the environment (KUBECONFIG, tokens), which is never printed.

#include <optional>
#include <string>
#include <vector>

namespace mlenv::plan {

/// How a child ended.
struct RunResult {
  int status = 0;          ///< exit status, or 128 + signal
  bool timed_out = false;  ///< killed at the deadline
  bool not_started = false;
};

/// Runs `argv` (argv[0] is the program's path) with `input` on stdin and the caller's stdout and
/// stderr; kills it after `timeout_seconds` (0: no deadline).
RunResult run_command(const std::vector<std::string>& argv, const std::string& input,
                      int timeout_seconds);

/// The command as a shell would need it typed, for dry runs and logs.
std::string shell_words(const std::vector<std::string>& argv);

/// The first executable called `name` in $PATH, or nullopt.
std::optional<std::string> find_on_path(const std::string& name);

/// Seconds in a duration like `30m`, `90s`, `1h`, `1h30m`; nullopt if malformed.
std::optional<int> parse_duration(const std::string& text);

}  // namespace mlenv::plan
