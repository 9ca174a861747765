#pragma once
// The whole front end in one call: read, parse, check. Commands that need the typed program
// (check, build, plan, apply) start here.

#include <memory>
#include <optional>
#include <string>

#include "compiler/base/file_system.h"
#include "compiler/base/source.h"
#include "compiler/check/check.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/ir/program.h"
#include "targets/target.h"

namespace mlenv::driver {

struct Compilation {
  SourceManager sources;
  Diagnostics diagnostics;
  std::optional<ir::Program> program;  ///< set when there are no errors
  check::ProgramIndex index;           ///< the files read, when compile() was asked to keep it
};

/// Compiles the file at `path` and everything it imports (`std/...` from the embedded stdlib,
/// site imports from `MLENV_PATH`, git imports from `git`, by default the cache mlenv.lock
/// pins), keeping the files read in the compilation's `index` when `keep_index`. Every command
/// and the language server load programs here.
std::unique_ptr<Compilation> compile(const std::string& path, const FileSystem& files,
                                     check::GitFiles* git = nullptr, bool keep_index = false);

/// What `mlenvc check` does with one file (and `mlenvc lsp` on every edit): compile, then run
/// the target's rules that need the emitted objects, dropping the rendered files. `program` is
/// reset when those rules report errors; the target's notes land in `notes`.
std::unique_ptr<Compilation> check_file(const std::string& path, const FileSystem& files,
                                        std::vector<std::string>& notes, bool keep_index = false);

/// Renders the compiled program with `target`, adding the target's diagnostics to the
/// compilation's; the output only when there are no errors at all.
std::optional<target::Output> render(Compilation& compilation, const target::Target& target,
                                     target::Scope scope = target::Scope::Tree);

/// Prints the target's notes for people (Secrets to create, what cluster-admin applies) to
/// stderr, one `note: ` line each.
void print_notes(const target::Output& output);

/// Prints every diagnostic of `compilation` to stderr as text or JSON lines, and a summary
/// line in text mode when there were errors.
void print_diagnostics(const Compilation& compilation, bool json);

}  // namespace mlenv::driver
