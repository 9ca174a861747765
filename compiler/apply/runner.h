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
  std::string output;  ///< stdout, when captured
};

/// Runs `argv` (argv[0] is the program's path) with `input` on stdin and the caller's stderr;
/// stdout is the caller's, or captured into RunResult::output when `capture`. Kills the child
/// at the deadline, `timeout_seconds` from now (0: no deadline). An input of at most 4 KiB goes
/// through a pipe and never touches the disk (Secrets); a larger one through an unlinked
/// temporary file, so a child that does not read it cannot block the parent.
RunResult run_command(const std::vector<std::string>& argv, const std::string& input,
                      int timeout_seconds, bool capture = false);

/// The command as a shell would need it typed, for dry runs and logs.
std::string shell_words(const std::vector<std::string>& argv);

/// The first executable called `name` in $PATH, or nullopt.
std::optional<std::string> find_on_path(const std::string& name);

/// The longest duration accepted: 30 days.
constexpr int kMaxDurationSeconds = 30 * 24 * 3600;

/// Seconds in a duration like `30m`, `90s`, `1h`, `1h30m`; nullopt if malformed, zero, or over
/// kMaxDurationSeconds (so `999999h` cannot overflow into the past).
std::optional<int> parse_duration(const std::string& text);

}  // namespace mlenv::plan
