#include "compiler/driver/pipeline.h"

#include <unistd.h>
#include <cstdlib>
#include <iostream>

#include "compiler/check/check.h"
#include "compiler/diag/render.h"
#include "targets/provider.h"

namespace mlenv::driver {

std::unique_ptr<Compilation> compile(const std::string& path, const FileSystem& files,
                                     check::GitFiles* git, bool keep_index) {
  auto compilation = std::make_unique<Compilation>();
  check::ImportSources imports;
  imports.git = git;
  if (const char* site = std::getenv("MLENV_PATH")) imports.site = check::site_folders(site);
  compilation->program = check::check_program(path, files, compilation->sources,
                                              compilation->diagnostics, target::check_rules(),
                                              imports, keep_index ? &compilation->index : nullptr);
  return compilation;
}

std::unique_ptr<Compilation> check_file(const std::string& path, const FileSystem& files,
                                        std::vector<std::string>& notes, bool keep_index) {
  auto compilation = compile(path, files, nullptr, keep_index);
  if (compilation->program) {
    notes = target::make_program_target()->check(*compilation->program, compilation->diagnostics);
    if (compilation->diagnostics.has_errors()) compilation->program.reset();
  }
  return compilation;
}

std::optional<target::Output> render(Compilation& compilation, const target::Target& target,
                                     target::Scope scope) {
  if (!compilation.program) return std::nullopt;
  target::Output output = target.render(*compilation.program, compilation.diagnostics, scope);
  if (compilation.diagnostics.has_errors()) return std::nullopt;
  return output;
}

void print_notes(const target::Output& output) {
  for (const std::string& note : output.notes) std::cerr << "note: " << printable(note) << '\n';
}

void print_diagnostics(const Compilation& compilation, bool json) {
  bool color = !json && ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  std::size_t warnings = 0;
  for (const Diagnostic& d : compilation.diagnostics.all()) {
    if (json) {
      render_json(std::cerr, compilation.sources, d);
    } else {
      render_text(std::cerr, compilation.sources, d, color);
      std::cerr << '\n';
    }
    warnings += d.severity == Severity::Warning;
  }
  std::size_t errors = compilation.diagnostics.error_count();
  if (!json && compilation.diagnostics.dropped() != 0) {
    std::cerr << "mlenvc: " << compilation.diagnostics.dropped()
              << " more diagnostics not shown (the first " << Diagnostics::kMaxKept << " are)\n";
  }
  if (!json && errors != 0) {
    std::cerr << "mlenvc: " << errors << (errors == 1 ? " error" : " errors");
    if (warnings) std::cerr << ", " << warnings << (warnings == 1 ? " warning" : " warnings");
    std::cerr << '\n';
  }
}

}  // namespace mlenv::driver
