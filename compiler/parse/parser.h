#pragma once
// The parse phase: text in, syntax tree and diagnostics out. The only phase that sees
// Boost.Spirit X3, and only in its .cc files.

#include <string_view>

#include "compiler/base/source.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/syntax/ast.h"

namespace mlenv::parse {

/// Parses one file. On a syntax error it reports E01xx and resumes at the next line that
/// starts a declaration, so one run reports errors in several declarations.
ast::File parse_file(FileId file, std::string_view text, Diagnostics& diagnostics);

}  // namespace mlenv::parse
