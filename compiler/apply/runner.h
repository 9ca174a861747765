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
  /// Captured stdout passed kMaxCapturedOutput: the child was stopped (status 124) and the
  /// output dropped, as no reply that long is one mlenvc asked for.
  bool overflowed = false;
  std::string output;  ///< stdout, when captured
};

/// The most stdout a captured child may print: 64 MiB (`get pods -o json` of 1,024 ranks is
/// about 10 MiB). A client that never stops printing is stopped here, not at `bad_alloc`.
inline constexpr std::size_t kMaxCapturedOutput = std::size_t{64} << 20;

/// Runs `argv` (argv[0] is the program's path) with `input` on stdin, in a process group of its
/// own. Its stdout is captured into RunResult::output when `capture` (at most
/// kMaxCapturedOutput), else shown on the caller's; its stderr is shown on the caller's; shown
/// bytes are escaped (diag/render.h `printable`), so no control sequence reaches the terminal.
/// At the deadline, `timeout_seconds` from now (0: no deadline), the whole group is stopped
/// (status 124); when the child exits, what it left running in its group is killed. An input of at
/// most 4 KiB goes through a pipe and never touches the disk (Secrets); a larger one through an
/// unlinked temporary file, so a child that does not read it cannot block the parent.
RunResult run_command(const std::vector<std::string>& argv, const std::string& input,
                      int timeout_seconds, bool capture = false);

/// The command as a shell would need it typed, for dry runs and logs.
std::string shell_words(const std::vector<std::string>& argv);

/// The first executable called `name` in $PATH, or nullopt.
std::optional<std::string> find_on_path(const std::string& name);

/// The longest duration accepted: 30 days.
constexpr int kMaxDurationSeconds = 30 * 24 * 3600;

/// Whole seconds in a duration (compiler/base/duration.h: `30m`, `90s`, `1h30m`); nullopt if
/// malformed, zero, not whole seconds, or over kMaxDurationSeconds.
std::optional<int> parse_duration(const std::string& text);

}  // namespace mlenv::plan
