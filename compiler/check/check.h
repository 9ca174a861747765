#pragma once
// The check phase: syntax trees in, typed program out. Resolves imports and references,
// merges `extends` chains, types every value against schema/, fills defaults, checks required
// fields on each env and applies the language's rules.

#include <optional>
#include <string>
#include <vector>

#include "compiler/base/file_system.h"
#include "compiler/base/source.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/ir/program.h"

namespace mlenv::check {

class GitFiles;

/// Where the imports that are neither relative nor `std/...` come from.
struct ImportSources {
  /// Git imports (`git::URL//PATH?ref=REF`); nullptr: the cache beside the root file, checked
  /// against the mlenv.lock there (git_imports.h).
  GitFiles* git = nullptr;
  /// The site library (`MLENV_PATH`): folders searched in order for an import with no `./`,
  /// `../` or `std/` that is not found relative to the importing file.
  std::vector<std::string> site;
};

/// Checks the program rooted at `path` (read through `files`; `std/...` imports come from the
/// embedded stdlib). Returns the typed program when no error was reported. The one way a
/// program is loaded: every command and the language server come here.
std::optional<ir::Program> check_program(const std::string& path, const FileSystem& files,
                                         SourceManager& sources, Diagnostics& diagnostics,
                                         const ImportSources& imports = {});

/// The folders of a `MLENV_PATH` value (colon-separated; empty entries skipped).
std::vector<std::string> site_folders(const std::string& mlenv_path);

/// The text of the embedded schema file defining `name` (a schema or an enum), with its
/// path; empty when there is none. For `mlenvc explain cluster`.
std::string describe_type(const std::string& name);

}  // namespace mlenv::check
