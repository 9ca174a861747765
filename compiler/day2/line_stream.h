#pragma once
// Several commands' output as one stream of whole lines, each prefixed with where it came from.

#include <ostream>
#include <string>
#include <vector>

namespace mlenv::plan::day2 {

struct LineSource {
  std::vector<std::string> argv;  ///< argv[0] is the program's path
  std::string prefix;             ///< put before each of its lines (`[0] `)
};

/// The longest line kept whole; a longer one is written in pieces of this size, each prefixed.
inline constexpr std::size_t kMaxLine = 64 * 1024;

/// Runs every source's command at once (stdin /dev/null, stderr the caller's) and writes each
/// line of their stdout to `out` as soon as it is complete, prefixed. One thread writes, so
/// lines of different sources never mix; a last line without a newline gets one. At the
/// deadline (`timeout_seconds` from now, 0: none) the commands still running are stopped.
/// Returns each command's exit status (124 when stopped at the deadline, 127 when it could not
/// start), in the order of `sources`.
std::vector<int> stream_lines(const std::vector<LineSource>& sources, std::ostream& out,
                              int timeout_seconds);

}  // namespace mlenv::plan::day2
