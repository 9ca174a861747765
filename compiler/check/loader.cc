// Loading files and imports: `std/...` from the embedded stdlib, `git::...` from the git
// sources (git_imports.h), other paths relative to the importing file or else from the site
// library (MLENV_PATH); cycles reported with the cycle.

#include <algorithm>
#include <unordered_map>
#include <variant>

#include "compiler/base/embedded.h"
#include "compiler/base/limits.h"
#include "compiler/check/checker.h"
#include "compiler/parse/parser.h"

namespace mlenv::check {
namespace {

std::string with_extension(std::string path) {
  if (path.size() < 6 || path.compare(path.size() - 6, 6, ".mlenv") != 0) path += ".mlenv";
  return path;
}

// `std/images/pytorch` → `pytorch`, `git::URL//site/barcelona?ref=v1` → `barcelona`; the
// qualifier an import makes available.
std::string qualifier_of(const std::string& import) {
  std::string error;
  std::optional<GitSource> git =
      is_git_source(import) ? parse_git_source(import, error) : std::nullopt;
  const std::string& path = git ? git->path : import;
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (base.size() > 6 && base.compare(base.size() - 6, 6, ".mlenv") == 0)
    base.resize(base.size() - 6);
  return base;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

}  // namespace

std::string join_cycle(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += " -> ";
    out += name;
  }
  return out;
}

std::optional<std::string> Checker::read(const std::string& path, SourceRange from,
                                         std::string& display_path, std::string& origin,
                                         std::string& commit) {
  display_path = path;
  if (path.rfind("std/", 0) == 0) {
    for (std::size_t i = 0; i < kStdlibFiles_count; ++i) {
      if (kStdlibFiles[i].path == path) return std::string(kStdlibFiles[i].bytes);
    }
    diagnostics_.report(Code::E0201, from, "no standard library file `" + path + "`",
                        "not in the embedded stdlib");
    return std::nullopt;
  }
  if (is_git_source(path)) {
    std::string error;
    std::optional<GitSource> source = parse_git_source(path, error);
    if (!from.valid() || !source) {  // the root: its folder holds the lock, so a local file
      diagnostics_.report(Code::E0220, from,
                          "the file to compile is a local file; import `" + path + "` from one");
      return std::nullopt;
    }
    auto file = git_->read(*source);
    if (const auto* failure = std::get_if<GitFailure>(&file)) {
      diagnostics_.report(failure->code, from, failure->message, failure->label);
      return std::nullopt;
    }
    GitFile& got = std::get<GitFile>(file);
    display_path = got.disk_path;
    commit = got.commit;
    origin = "`" + source->path + "` at " + got.commit.substr(0, 7) + " of git::" + source->url;
    return std::move(got.text);
  }
  std::string error;
  auto text = files_.read(path, error);
  if (!text) {
    diagnostics_.report(Code::E0201, from, "cannot read `" + path + "`: " + error,
                        searched_site_.count(path) ? "nor found in the folders of MLENV_PATH" : "");
  }
  return text;
}

bool Checker::readable(const std::string& path) const {
  std::string error;
  return modules_by_path_.count(path) != 0 || files_.read(path, error).has_value();
}

std::string Checker::resolve_import(const Module& module, const std::string& target,
                                    SourceRange at) {
  if (target.rfind("std/", 0) == 0) return with_extension(target);
  if (is_git_source(target)) {
    std::string error;
    std::optional<GitSource> source = parse_git_source(target, error);
    if (!source) diagnostics_.report(Code::E0220, at, "malformed git import: " + error);
    return source ? source->text() : "";
  }
  if (module.git) {
    // Inside a git source, every other import is a file of the same repository at the same
    // commit: a published profile cannot reach the consumer's disk or the site library.
    std::string joined = parent_path(module.git->path).empty()
                             ? target
                             : parent_path(module.git->path) + "/" + target;
    std::optional<std::string> inside = path_inside_repository(joined);
    if (!inside || target.front() == '/') {
      diagnostics_.report(Code::E0223, at,
                          "`" + target + "` leaves the repository of " + module.git->repository(),
                          "a git import reads only files of its own repository");
      return "";
    }
    GitSource sibling = *module.git;
    sibling.path = with_extension(*inside);
    return sibling.text();
  }
  std::string relative =
      with_extension(normalize_path(parent_path(module.path).empty() || target.front() == '/'
                                        ? target
                                        : parent_path(module.path) + "/" + target));
  bool explicit_relative =
      target.rfind("./", 0) == 0 || target.rfind("../", 0) == 0 || target.front() == '/';
  if (explicit_relative || site_.empty() || readable(relative)) return relative;
  // The site library never shadows a file beside the importer: it is searched only when
  // there is none.
  for (const std::string& folder : site_) {
    std::string candidate = with_extension(normalize_path(folder + "/" + target));
    if (readable(candidate)) return candidate;
  }
  searched_site_.insert(relative);
  return relative;  // reported as unreadable where it is loaded
}

Module* Checker::load(const std::string& path, SourceRange from, std::vector<Module*>& stack) {
  if (auto it = modules_by_path_.find(path); it != modules_by_path_.end()) {
    Module* module = it->second;
    if (module->phase == Module::Phase::Loading) {
      std::vector<std::string> cycle;
      auto start = std::find(stack.begin(), stack.end(), module);
      for (auto m = start; m != stack.end(); ++m) cycle.push_back((*m)->path);
      cycle.push_back(path);
      diagnostics_.report(Code::E0202, from, "import cycle: " + join_cycle(cycle),
                          "this import closes the cycle");
      return nullptr;
    }
    return module;
  }
  if (modules_.size() >= limits::kMaxFiles) {
    diagnostics_.report(Code::E0104, from,
                        "more than " + std::to_string(limits::kMaxFiles) + " files imported");
    return nullptr;
  }
  std::string display_path, origin, commit;
  auto text = read(path, from, display_path, origin, commit);
  if (!text) return nullptr;
  source_bytes_ += text->size();
  if (source_bytes_ > limits::kMaxSourceBytes) {
    diagnostics_.report(Code::E0104, from,
                        "the files of this program exceed " +
                            std::to_string(limits::kMaxSourceBytes >> 20) + " MiB in all",
                        "this import crossed the limit");
    return nullptr;
  }
  Module& module = modules_.emplace_back();
  module.path = path;
  module.commit = commit;
  if (is_git_source(path)) {
    std::string error;
    module.git = parse_git_source(path, error);
  }
  module.file = sources_.add(display_path, std::move(*text), origin);
  modules_by_path_[path] = &module;
  module.tree = std::make_unique<ast::File>(
      parse::parse_file(module.file, sources_.file(module.file).text(), diagnostics_));
  declare(module);

  stack.push_back(&module);
  std::map<std::string, SourceRange> qualifiers;
  for (const ast::Item& item : module.tree->items) {
    const auto* import = boost::get<ast::Import>(&item);
    if (!import) continue;
    std::string target;
    for (const auto& part : import->path.parts) {
      if (const auto* text_part = boost::get<std::string>(&part)) target += *text_part;
    }
    SourceRange range = module.at(*import);
    if (import->path.parts.size() != 1 || import->path.heredoc || target.empty()) {
      diagnostics_.report(Code::E0201, module.at(import->path),
                          "an import path is a plain string without interpolation");
      continue;
    }
    std::string resolved = resolve_import(module, target, module.at(import->path));
    if (resolved.empty()) {
      module.failed_imports.insert(import->alias ? import->alias->name : qualifier_of(target));
      continue;
    }
    std::string qualifier = import->alias ? import->alias->name : qualifier_of(target);
    if (!is_identifier(qualifier)) {
      diagnostics_.report(Code::E0204, range,
                          "`" + qualifier + "` cannot qualify names; add `as NAME`");
      continue;
    }
    if (auto previous = qualifiers.find(qualifier); previous != qualifiers.end()) {
      Diagnostic& d = diagnostics_.report(Code::E0204, range,
                                          "two imports use the qualifier `" + qualifier + "`",
                                          "add `as NAME` to one of them");
      d.notes.push_back({"the first import of `" + qualifier + "`", previous->second});
      continue;
    }
    qualifiers[qualifier] = range;
    if (Module* imported = load(resolved, range, stack)) {
      module.imports[qualifier] = imported;
    } else {
      module.failed_imports.insert(qualifier);
    }
  }
  stack.pop_back();
  module.phase = Module::Phase::Loaded;
  return &module;
}

void Checker::declare(Module& module) {
  // "kind name" -> where it was first declared; hashed, as a fleet declares thousands.
  std::unordered_map<std::string, SourceRange> seen;
  for (const ast::Item& item : module.tree->items) {
    const ast::Identifier* name = nullptr;
    const ast::Decl* decl = boost::get<ast::Decl>(&item);
    if (decl) {
      name = &decl->name;
    } else if (const auto* schema = boost::get<ast::Schema>(&item)) {
      diagnostics_.report(Code::E0208, module.at(schema->name),
                          "`schema` declarations are allowed only in the compiler's schema/ files");
      continue;
    } else if (const auto* enumeration = boost::get<ast::Enum>(&item)) {
      diagnostics_.report(Code::E0208, module.at(enumeration->name),
                          "`enum` declarations are allowed only in the compiler's schema/ files");
      continue;
    } else {
      continue;
    }
    auto [previous, fresh] = seen.try_emplace(decl->kind.name + " " + name->name, module.at(*name));
    if (!fresh) {
      Diagnostic& d =
          diagnostics_.report(Code::E0203, module.at(*name),
                              "the " + decl->kind.name + " `" + name->name + "` is declared twice");
      d.notes.push_back({"first declared here", previous->second});
      continue;
    }
    DeclState& state = decls_.emplace_back();
    state.decl = decl;
    state.module = &module;
    for (const char* kind : kDeclarationKinds) {
      if (decl->kind.name == kind) state.schema = types_.schema(kind);
    }
    if (!state.schema) {
      std::vector<std::string> kinds(std::begin(kDeclarationKinds), std::end(kDeclarationKinds));
      std::string hint = closest_name(decl->kind.name, kinds);
      diagnostics_.report(Code::E0208, module.at(decl->kind),
                          "unknown declaration kind `" + decl->kind.name + "`",
                          hint.empty() ? "expected cluster, image, env, storage or network"
                                       : "did you mean `" + hint + "`?");
    }
    module.decls[name->name].push_back(&state);
  }
}

}  // namespace mlenv::check
