#pragma once
// Writes a target's Output for `mlenvc build`: as a tree on disk or as one stream. With the
// plan writer (worktree.h), the only code that writes output files.

#include <ostream>
#include <string>

#include "targets/target.h"

namespace mlenv::plan {

/// Writes every file under `root`, creating directories; never removes or writes outside
/// `root` (paths with `..` or a leading `/` are refused). Returns "" or the first error.
std::string write_output_tree(const target::Output& output, const std::string& root);

/// Writes every object of `output` as one multi-document YAML stream (for `oc apply -f -`).
void write_object_stream(const target::Output& output, std::ostream& out);

/// Writes one object of that stream (Target::stream hands them over one at a time).
void write_stream_object(const target::File& object, std::ostream& out);

}  // namespace mlenv::plan
