#pragma once
// The checker's internal state, shared by its translation units: modules (loader.cc),
// evaluation and merging (evaluate.cc), completion (env.cc), rules (rules.cc) and
// lowering (lower.cc).

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/base/file_system.h"
#include "compiler/base/git_source.h"
#include "compiler/check/check.h"
#include "compiler/check/git_imports.h"
#include "compiler/check/platform_rules.h"
#include "compiler/check/rules_hygiene.h"
#include "compiler/check/types.h"
#include "compiler/check/value.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/ir/program.h"

namespace mlenv::check {

/// The cluster's platform, read once from its `platform` field (the schema's enum; OpenShift
/// where unset).
ir::Platform platform_of(const Value* cluster);

struct Module;

/// One declaration and its evaluation state.
struct DeclState {
  const ast::Decl* decl = nullptr;
  Module* module = nullptr;
  const SchemaDef* schema = nullptr;  ///< nullptr for an unknown kind
  enum class Phase { Unvisited, InProgress, Done } phase = Phase::Unvisited;
  ValuePtr value;           ///< nullptr when evaluation failed
  bool had_errors = false;  ///< its evaluation reported errors: reads of it stay silent
};

/// One loaded file: its tree, its declarations and its imports by qualifier.
struct Module {
  std::string path;  ///< the loader's key: a path, `std/...`, or a git source's text()
  FileId file = 0;
  std::optional<GitSource> git;  ///< set for a file of a git source
  std::string commit;            ///< the commit a git source's file was read at
  std::unique_ptr<ast::File> tree;
  /// By name; a name may be declared once per kind (`image x` and `env x` coexist).
  std::map<std::string, std::vector<DeclState*>> decls;
  std::map<std::string, Module*> imports;
  /// Qualifiers of imports that failed (reported once, E0201): their uses stay silent.
  std::set<std::string> failed_imports;
  enum class Phase { Loading, Loaded } phase = Phase::Loading;

  SourceRange at(const ast::Located& node) const { return {file, node.begin, node.end}; }
};

class Checker {
 public:
  Checker(const FileSystem& files, SourceManager& sources, Diagnostics& diagnostics,
          const TypeRegistry& types, const PlatformRulesList& platforms,
          const ImportSources& imports = {});

  std::optional<ir::Program> run(const std::string& root_path);
  /// Moves the loaded files' trees into `index` (after run; the checker is done with them).
  void keep_index(ProgramIndex& index);

  /// The fields only some platforms have (E0418), each with the platforms that have it: the
  /// union of every platform's PlatformRules::fields(), the cluster's first.
  struct PlatformFieldTable {
    explicit PlatformFieldTable(const PlatformRulesList& platforms);
    struct Entry {
      PlatformField field;
      std::set<ir::Platform> platforms;
    };
    std::vector<Entry> entries;
  };

 private:
  // loader.cc
  Module* load(const std::string& path, SourceRange from, std::vector<Module*>& stack);
  void declare(Module& module);
  /// The text of the file `path` names (a path, `std/...` or a git source), and where
  /// diagnostics should say it comes from; nullopt after reporting why not.
  std::optional<std::string> read(const std::string& path, SourceRange from,
                                  std::string& display_path, std::string& origin,
                                  std::string& commit);
  /// The loader key of `target` imported from `module`; "" after reporting why there is none.
  std::string resolve_import(const Module& module, const std::string& target, SourceRange at);
  /// Whether `path` can be read, for the site library's search.
  bool readable(const std::string& path) const;

  // evaluate.cc
  ValuePtr eval_decl(DeclState& state, bool via_extends, SourceRange from);
  void apply_block(Value& target, const ast::Block& block, const SchemaDef* schema,
                   const Type* map_element, Module& module, std::size_t depth);
  ValuePtr eval_expr(const ast::Expr& expr, const Type& type, Module& module, std::size_t depth);
  ValuePtr eval_string(const ast::StringLit& literal, const Type& type, Module& module);
  ValuePtr eval_number(const ast::Number& number, const Type& type, Module& module);
  ValuePtr eval_ref(const ast::Ref& ref, const Type& type, Module& module);
  DeclState* resolve_decl(Module& module, const ast::Ref& ref, std::size_t& consumed,
                          const SchemaDef* kind = nullptr);
  DeclState* pick(const std::vector<DeclState*>& candidates, const SchemaDef* kind,
                  const std::string& name, SourceRange at);
  const Value* read_value(Module& module, const ast::Ref& ref);
  ValuePtr field_default(const FieldDef& field);
  bool check_scalar(Value& value, const Type& type, SourceRange range);
  /// Counts `bytes` against the budget of built values; false (E0104, once, at `at`) past it.
  bool spend(std::size_t bytes, SourceRange at);
  /// clone(), counted against the budget; nullptr past it.
  ValuePtr copy_value(const Value& value, SourceRange at);

  // env.cc
  /// Whether `range` lies in a file of the user's (not the stdlib, not a fetched git file).
  bool is_users_file(SourceRange range) const;
  void complete(Value& value, const SchemaDef& schema, const DeclState& env,
                const std::string& path);
  // rules.cc
  void check_rules(const Value& env, const DeclState& state);
  /// The rules of `platform`; nullptr when the caller gave none.
  const PlatformRules* platform_rules(ir::Platform platform) const;
  // lower.cc
  ir::Env lower(const Value& env, const DeclState& state);
  /// Drops a lowered env's value (a fleet's would outweigh its IR), keeping alive the nodes in
  /// it that `checked_values_` names, whose addresses a later env's values must not reuse.
  void release(DeclState& env);

  const FileSystem& files_;
  SourceManager& sources_;
  Diagnostics& diagnostics_;
  const TypeRegistry& types_;
  const PlatformRulesList& platforms_;
  PlatformFieldTable platform_fields_;
  std::vector<std::string> site_;        ///< MLENV_PATH folders
  std::set<std::string> searched_site_;  ///< imports looked for in them in vain
  GitFiles* git_;
  std::unique_ptr<LockedGitFiles> locked_git_;  ///< git_ when the caller gave none
  std::deque<Module> modules_;
  std::map<std::string, Module*> modules_by_path_;
  std::deque<DeclState> decls_;
  std::vector<DeclState*> eval_stack_;
  std::set<std::pair<std::uint32_t, std::string>> reported_missing_;
  std::set<std::uint64_t> reported_rails_;  ///< rails already reported, by source place
  /// Platform findings about a cluster or image already reported (every env using it would
  /// repeat them), by source place and field.
  std::set<std::string> reported_platform_;
  CheckedValues checked_values_;         ///< image values every env shares, checked once
  std::vector<ValuePtr> checked_alive_;  ///< those of released envs (release())
  /// Bytes of values built so far (strings, and the lists and blocks copied on write), held
  /// to limits::kMaxValueBytes so that memory is bounded by the input.
  /// Failures reported elsewhere (a use of a failed import, whose E0201 explains it): they
  /// count as errors of the declaration being evaluated without a diagnostic of their own.
  std::size_t silent_failures_ = 0;
  std::size_t built_bytes_ = 0;
  std::size_t source_bytes_ = 0;  ///< of the files loaded, against limits::kMaxSourceBytes
  bool budget_reported_ = false;
  /// A `${...}` is being read: an unknown name there is most often a shell variable.
  bool in_interpolation_ = false;
  Module schema_module_;  ///< context for evaluating schema defaults (no declarations)
};

/// `a -> b -> a`, for cycle diagnostics.
std::string join_cycle(const std::vector<std::string>& names);

}  // namespace mlenv::check
