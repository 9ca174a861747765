#pragma once
// The cache `.mlenv/` beside mlenv.lock belongs to the user who ran `mlenvc get`, never to the
// repository: a cache a repository ships (committed, or a link it commits) decides what a git
// import reads and where get writes and deletes. Every command checks it before using it.

#include <optional>
#include <string>

namespace mlenv {

/// Why the cache folder `<folder>/.mlenv` is not the user's own, or nullopt when it is (or is
/// absent): a symbolic link (or other non-folder) where mlenv reads or writes — `.mlenv`,
/// `.mlenv/.gitignore`, `.mlenv/git` and `.mlenv/repos` and their entries — or a path under
/// it that git tracks in the repository holding `folder`. `folder` "" is the current one.
std::optional<std::string> foreign_cache(const std::string& folder);

}  // namespace mlenv
