#pragma once
// The check phase: syntax trees in, typed program out. Resolves imports and references,
// merges `extends` chains, types every value against schema/, fills defaults, checks required
// fields on each env and applies the language's rules.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/base/file_system.h"
#include "compiler/base/source.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/ir/program.h"
#include "compiler/syntax/ast.h"

namespace mlenv::check {

/// One file the loader read, kept for tools that navigate a program (`mlenvc lsp`).
struct LoadedFile {
  std::string path;                            ///< as the loader resolved it (`std/...` too)
  FileId file = 0;                             ///< in the SourceManager of the check
  std::shared_ptr<const ast::File> tree;       ///< without the items that failed to parse
  std::map<std::string, std::string> imports;  ///< qualifier -> path of the file it names
};

/// Every file a check loaded, the root first.
struct ProgramIndex {
  std::vector<LoadedFile> files;
};

class GitFiles;
class PlatformRules;

/// Every platform's rules (platform_rules.h; target::check_rules() gives the providers').
using PlatformRulesList = std::vector<const PlatformRules*>;

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
/// program is loaded: every command and the language server come here (driver::compile).
/// `platforms`: every platform's rules (target::check_rules()); a cluster of a platform
/// without rules gets the language's only. With `index`, the files read and their syntax
/// trees are kept there, whatever the outcome.
std::optional<ir::Program> check_program(const std::string& path, const FileSystem& files,
                                         SourceManager& sources, Diagnostics& diagnostics,
                                         const PlatformRulesList& platforms,
                                         const ImportSources& imports = {},
                                         ProgramIndex* index = nullptr);

/// The folders of a `MLENV_PATH` value (colon-separated; empty entries skipped).
std::vector<std::string> site_folders(const std::string& mlenv_path);

/// The text of the embedded schema file defining `name` (a schema or an enum), with its
/// path; empty when there is none. For `mlenvc explain cluster`.
std::string describe_type(const std::string& name);

/// Every file of the embedded stdlib with its declarations and the first sentence of each
/// one's documentation. For `mlenvc explain std`.
std::string describe_stdlib();

}  // namespace mlenv::check
