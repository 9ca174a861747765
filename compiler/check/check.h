#pragma once
// The check phase: syntax trees in, typed program out. Resolves imports and references,
// merges `extends` chains, types every value against schema/, fills defaults, checks required
// fields on each env and applies the language's rules.

#include <optional>
#include <string>

#include "compiler/base/file_system.h"
#include "compiler/base/source.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/ir/program.h"

namespace mlenv::check {

/// Checks the program rooted at `path` (read through `files`; `std/...` imports come from the
/// embedded stdlib). Returns the typed program when no error was reported.
std::optional<ir::Program> check_program(const std::string& path, const FileSystem& files,
                                         SourceManager& sources, Diagnostics& diagnostics);

/// The text of the embedded schema file defining `name` (a schema or an enum), with its
/// path; empty when there is none. For `mlenvc explain cluster`.
std::string describe_type(const std::string& name);

}  // namespace mlenv::check
