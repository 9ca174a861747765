#pragma once
// Putting an Output in its final order: every target's last step, and the merge of the outputs
// of several targets (a program whose clusters run on different platforms).

#include <vector>

#include "targets/target.h"

namespace mlenv::target {

/// Sorts `out.files` by path and rewrites `out.stream` to name the same files.
void sort_files(Output& out);

/// One output holding every part's files and stream (in part order) and notes. A path that
/// several parts emit with the same bytes (the runtime sources) is kept once; with different
/// bytes it is a target bug and throws std::logic_error.
Output merge_outputs(std::vector<Output> parts);

}  // namespace mlenv::target
