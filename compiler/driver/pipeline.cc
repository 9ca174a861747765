#include "compiler/driver/pipeline.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "compiler/check/check.h"
#include "compiler/diag/render.h"
#include "targets/provider.h"

namespace mlenv::driver {

namespace {

// Why other users can change what `folder` holds, or "": it, or a folder above it, is
// writable by group or others without the sticky bit (which keeps them from replacing what is
// not theirs, as in /tmp), or owned by someone but us and root. As ssh's StrictModes judges a
// path (OpenBSD ssh, misc.c safe_path).
std::string writable_by_others(const std::string& folder) {
  std::filesystem::path path = std::filesystem::absolute(folder).lexically_normal();
  for (;; path = path.parent_path()) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      bool shared = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0;
      if (shared || (st.st_uid != ::geteuid() && st.st_uid != 0)) return path.string();
    }
    if (path == path.root_path() || path.empty()) return "";
  }
}

// Warns once per process of an MLENV_PATH folder others can write to: its files are imported
// by every program that names them (issue 32).
void warn_shared_site(const std::vector<std::string>& site) {
  static bool warned = false;
  if (warned) return;
  warned = true;
  for (const std::string& folder : site) {
    std::string shared = writable_by_others(folder);
    if (shared.empty()) continue;
    std::cerr << "mlenvc: warning: MLENV_PATH folder `" << printable(folder) << "`: `"
              << printable(shared)
              << "` can be changed by other users (group or world writable, or not yours), "
                 "so they decide what its imports compile to\n";
  }
}

}  // namespace

std::unique_ptr<Compilation> compile(const std::string& path, const FileSystem& files,
                                     check::GitFiles* git, bool keep_index) {
  auto compilation = std::make_unique<Compilation>();
  check::ImportSources imports;
  imports.git = git;
  if (const char* site = std::getenv("MLENV_PATH")) {
    imports.site = check::site_folders(site);
    warn_shared_site(imports.site);
  }
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
