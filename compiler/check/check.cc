#include "compiler/check/check.h"

#include <algorithm>
#include <filesystem>

#include "compiler/base/embedded.h"
#include "compiler/base/limits.h"
#include "compiler/check/checker.h"

namespace mlenv::check {
namespace {

// Whether the env, or a declaration it names at its top level (its cluster, its image), reported
// errors while it was evaluated: its value may lack what was wrong (a rail dropped for a bad
// field), and checking it further would report what follows from the first errors.
bool uses_broken_declaration(const Value& env) {
  if (env.had_errors) return true;
  for (const Slot& slot : env.slots) {
    if (slot.value && slot.value->had_errors) return true;
  }
  return false;
}

// An input's path as plan.json and `_inputs/` record it: a file of the site library as
// `MLENV_PATH/<path in its folder>`, never its local absolute path (it names the planner's
// disk, and a plan from another machine would differ); others as loaded.
std::string recorded_path(const std::string& path, const std::vector<std::string>& site) {
  if (!path.starts_with("/") && !path.starts_with("../")) return path;
  namespace fs = std::filesystem;
  fs::path file = fs::absolute(path).lexically_normal();
  for (const std::string& folder : site) {
    std::string inside =
        file.lexically_relative(fs::absolute(folder).lexically_normal()).generic_string();
    if (!inside.empty() && !inside.starts_with("..")) return "MLENV_PATH/" + inside;
  }
  return path;
}

}  // namespace

std::optional<ir::Program> Checker::run(const std::string& root_path) {
  if (!git_) {
    locked_git_ = std::make_unique<LockedGitFiles>(files_, parent_path(root_path));
    git_ = locked_git_.get();
  }
  std::vector<Module*> stack;
  Module* root = load(root_path, {}, stack);
  if (!root) return std::nullopt;
  // Refused before anything is evaluated: each env is lowered, rendered and kept whole.
  std::size_t envs = 0;
  for (const ast::Item& item : root->tree->items) {
    const auto* decl = boost::get<ast::Decl>(&item);
    if (decl && decl->kind.name == "env" && ++envs > limits::kMaxEnvs) {
      diagnostics_.report(Code::E0104, root->at(decl->name),
                          "more than " + std::to_string(limits::kMaxEnvs) + " envs in one program",
                          "split the program: plan each file on its own");
      return std::nullopt;
    }
  }

  // Every declaration of every file is evaluated, so a broken profile is reported even when
  // no env uses it; required fields are checked only where an env uses a value.
  for (DeclState& state : decls_) eval_decl(state, false, state.module->at(state.decl->name));

  ir::Program program;
  program.source = root_path;
  // Room for every env up front: a fleet's IR is not copied as it grows, nor held twice.
  program.envs.reserve(
      std::count_if(root->tree->items.begin(), root->tree->items.end(), [](const ast::Item& item) {
        const auto* decl = boost::get<ast::Decl>(&item);
        return decl && decl->kind.name == "env";
      }));
  std::size_t errors_before_envs = diagnostics_.error_count();
  for (const ast::Item& item : root->tree->items) {
    const auto* decl = boost::get<ast::Decl>(&item);
    if (!decl || decl->kind.name != "env") continue;
    auto it = root->decls.find(decl->name.name);
    if (it == root->decls.end()) continue;
    auto found = std::find_if(it->second.begin(), it->second.end(),
                              [&](const DeclState* s) { return s->decl == decl; });
    if (found == it->second.end() || !(*found)->value) continue;
    DeclState& state = **found;
    // Completed in place: the defaults it gains are what any reader of the env would get.
    ValuePtr env = state.value;
    std::size_t errors = diagnostics_.error_count();
    complete(*env, *state.schema, state, "");
    if (diagnostics_.error_count() != errors || uses_broken_declaration(*env)) continue;
    check_rules(*env, state);
    if (diagnostics_.error_count() != errors) continue;
    program.envs.push_back(lower(*env, state));
    release(state);
  }
  for (const PlatformRules* rules : platforms_) rules->check_program(program, diagnostics_);
  if (diagnostics_.error_count() != 0 || errors_before_envs != 0) return std::nullopt;

  for (const Module& module : modules_) {
    program.inputs.push_back(
        {recorded_path(module.path, site_), sources_.file(module.file).text(), module.commit});
  }
  for (std::size_t i = 0; i < kSchemaFiles_count; ++i) {
    program.inputs.push_back(
        {"schema/" + std::string(kSchemaFiles[i].path), std::string(kSchemaFiles[i].bytes)});
  }
  std::sort(program.inputs.begin(), program.inputs.end(),
            [](const ir::InputFile& a, const ir::InputFile& b) { return a.path < b.path; });
  return program;
}

void Checker::keep_index(ProgramIndex& index) {
  for (Module& module : modules_) {
    LoadedFile& file = index.files.emplace_back();
    file.path = module.path;
    file.file = module.file;
    file.tree = std::move(module.tree);
    for (const auto& [qualifier, imported] : module.imports)
      file.imports[qualifier] = imported->path;
  }
}

std::optional<ir::Program> check_program(const std::string& path, const FileSystem& files,
                                         SourceManager& sources, Diagnostics& diagnostics,
                                         const PlatformRulesList& platforms,
                                         const ImportSources& imports, ProgramIndex* index) {
  std::unique_ptr<TypeRegistry> types = load_types(sources, diagnostics);
  if (diagnostics.has_errors()) return std::nullopt;
  ConfinedFileSystem confined(files, program_folders(path, imports.site));
  Checker checker(confined, sources, diagnostics, *types, platforms, imports);
  std::optional<ir::Program> program = checker.run(path);
  if (index) checker.keep_index(*index);
  return program;
}

std::vector<std::string> site_folders(const std::string& mlenv_path) {
  std::vector<std::string> folders;
  std::size_t start = 0;
  while (start <= mlenv_path.size()) {
    std::size_t end = std::min(mlenv_path.find(':', start), mlenv_path.size());
    if (end > start) folders.push_back(mlenv_path.substr(start, end - start));
    start = end + 1;
  }
  return folders;
}

std::string describe_type(const std::string& name) {
  for (std::size_t i = 0; i < kSchemaFiles_count; ++i) {
    std::string_view text = kSchemaFiles[i].bytes;
    for (const char* word : {"schema ", "enum "}) {
      std::string needle = std::string(word) + name + " ";
      std::size_t at = text.find(needle);
      if (at == std::string_view::npos || (at > 0 && text[at - 1] != '\n')) continue;
      // Include the `///` lines directly above the declaration.
      std::size_t start = at;
      while (start >= 2) {  // `start` begins a line; the previous line ends at start - 2
        std::size_t line = text.rfind('\n', start - 2);
        line = line == std::string_view::npos ? 0 : line + 1;
        if (text.substr(line, 3) != "///") break;
        start = line;
      }
      std::size_t end = text.find("\n}", at);
      end = end == std::string_view::npos ? text.size() : end + 2;
      return "schema/" + std::string(kSchemaFiles[i].path) + ":\n\n" +
             std::string(text.substr(start, end - start)) + "\n";
    }
  }
  return "";
}

}  // namespace mlenv::check
