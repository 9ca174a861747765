#pragma once
// Writes a target's Output to disk or to a stream. The only code in targets/ that touches the
// disk; it belongs with the plan writer (compiler/plan/) and is kept small so it can move there.

#include <ostream>
#include <string>

#include "targets/target.h"

namespace mlenv::target {

/// Writes every file under `root`, creating directories; never removes or writes outside
/// `root` (paths with `..` or a leading `/` are refused). Returns "" or the first error.
std::string write_output_tree(const Output& output, const std::string& root);

/// Writes every object of `output` as one multi-document YAML stream (for `oc apply -f -`).
void write_object_stream(const Output& output, std::ostream& out);

}  // namespace mlenv::target
