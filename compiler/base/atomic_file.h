#pragma once
// Writing a whole file the way git and editors do: into a new temporary file beside it, checked
// to the close, then renamed over the path. A full disk or a failed write leaves the old file
// whole (never an empty or cut one), a hard-linked copy of the tree keeps its bytes, and a
// symbolic link at the path is replaced rather than followed.

#include <string>
#include <string_view>

namespace mlenv {

/// Writes `bytes` to `path` with permission bits `mode` through a uniquely named temporary file
/// in the same directory, written, closed and renamed (not fsync'd: like git, a crash may lose
/// the newest bytes but never leaves a cut file under `path`); false with `error` (naming the
/// failing path and errno's text) when any step fails, and then the temporary file is removed.
/// The temporary file is `<prefix><name>.mlenv-tmp-XXXXXX` beside it: hidden by default; a pack
/// passes `tmp_`, the prefix `git prune` cleans up after a crash.
bool write_file_atomic(const std::string& path, std::string_view bytes, unsigned mode,
                       std::string& error, std::string_view prefix = ".");

}  // namespace mlenv
