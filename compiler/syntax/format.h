#pragma once
// The canonical form of a file (`mlenvc fmt`): two-space indent, one entry per line, `=`
// aligned within runs of one-line entries, comments kept where they were. Formatting
// formatted text is the identity.

#include <string>
#include <string_view>

#include "compiler/syntax/ast.h"

namespace mlenv::syntax {

/// Prints `file` (parsed from `text` without errors) in canonical form.
std::string format_file(std::string_view text, const ast::File& file);

}  // namespace mlenv::syntax
