#pragma once
// Helpers shared by the target tests: rendering a fixture and finding files of the output.

#include <string>

#include "compiler/diag/diagnostic.h"
#include "platforms/target.h"

namespace mlenv::testing {

/// Renders `program` with the OpenShift target into `diagnostics`.
inline target::Output render(const ir::Program& program, Diagnostics& diagnostics,
                             target::Scope scope = target::Scope::Tree) {
  return target::make_program_target()->render(program, diagnostics, scope);
}

/// The file at `path`, or nullptr.
inline const target::File* find_file(const target::Output& out, const std::string& path) {
  for (const target::File& f : out.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

/// Whether `diagnostics` holds `code`.
inline bool has_code(const Diagnostics& diagnostics, Code code) {
  for (const Diagnostic& d : diagnostics.all()) {
    if (d.code == code) return true;
  }
  return false;
}

}  // namespace mlenv::testing
