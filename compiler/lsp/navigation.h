#pragma once
// What an editor asks about a place in a program: the syntax node under the cursor, the
// declaration a reference names (across imports and `extends`), the schema of the block around
// the cursor. Read from the files a check kept (check::ProgramIndex): no second resolver of
// imports, and no second parser.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/base/source.h"
#include "compiler/check/check.h"
#include "compiler/check/types.h"
#include "compiler/syntax/ast.h"

namespace mlenv::lsp {

/// A declaration and the file it is written in.
struct DeclAt {
  const check::LoadedFile* file = nullptr;
  const ast::Decl* decl = nullptr;
};

/// What lies at a byte offset of a file's tree.
struct Cursor {
  enum class Kind { None, Import, DeclKind, DeclName, Extends, Key, Ref };
  Kind kind = Kind::None;
  const ast::Import* import = nullptr;
  const ast::Decl* decl = nullptr;         ///< the declaration around the cursor
  const ast::Ref* ref = nullptr;           ///< Extends and Ref
  std::vector<std::string> keys;           ///< Key: the keys from the declaration's body down to it
  const check::FieldDef* field = nullptr;  ///< Key: its schema field (nullptr for a map key)
  const check::Type* type = nullptr;       ///< Key and Ref: the type of the value there
  /// The innermost block around the cursor: its schema, or the element type of a map block.
  const check::SchemaDef* block_schema = nullptr;
  const check::Type* block_element = nullptr;
  /// The element type of the list around the cursor when it lies between the list's items
  /// (`services = [vscode, |`); nullptr elsewhere.
  const check::Type* list_element = nullptr;
};

/// Finds what lies at `offset` of `tree`, typing fields with `types`.
Cursor locate(const ast::File& tree, std::uint32_t offset, const check::TypeRegistry& types);

/// The files of one check, navigated.
class ProgramView {
 public:
  ProgramView(const check::ProgramIndex& index, const SourceManager& sources,
              const check::TypeRegistry& types)
      : index_(index), sources_(sources), types_(types) {}

  /// The file the loader read at `path`; nullptr if the check did not read it.
  const check::LoadedFile* file(const std::string& path) const;
  /// The text of a loaded file.
  std::string_view text(const check::LoadedFile& file) const;
  /// The declaration `ref` names from `file` (a local name, or `qualifier.name`), preferring
  /// one of `kind`; `consumed` says how many of the ref's parts named it.
  std::optional<DeclAt> resolve(const check::LoadedFile& file, const ast::Ref& ref,
                                const std::string& kind, std::size_t& consumed) const;
  /// The declarations `at` extends, nearest first (at most 64, stopping at a cycle).
  std::vector<DeclAt> ancestors(const DeclAt& at) const;
  /// The entry that sets `keys` in `at` or, failing that, in the nearest ancestor that does.
  std::optional<std::pair<DeclAt, const ast::Entry*>> setter(const DeclAt& at,
                                                             const std::vector<std::string>& keys,
                                                             bool include_self) const;
  /// Every declaration a reference from `file` may name, qualified as it would be written,
  /// of `kind` (or of any kind when it is empty).
  std::vector<std::pair<std::string, DeclAt>> names(const check::LoadedFile& file,
                                                    const std::string& kind) const;
  /// `path:line` of a byte offset of a loaded file, for people.
  std::string where(const check::LoadedFile& file, std::uint32_t offset) const;
  /// The source text of an expression, on one line and at most 80 characters.
  std::string excerpt(const check::LoadedFile& file, const ast::Expr& value) const;

  /// Markdown about what lies at `offset` of the file at `path`; "" when nothing is known.
  std::string hover(const std::string& path, std::uint32_t offset) const;
  /// The file and byte range that what lies at `offset` names.
  struct Target {
    std::string path;
    std::uint32_t begin = 0, end = 0;
  };
  std::optional<Target> definition(const std::string& path, std::uint32_t offset) const;

 private:
  std::string hover_decl(const DeclAt& at) const;
  std::string hover_key(const check::LoadedFile& file, const Cursor& cursor) const;
  std::string hover_ref(const check::LoadedFile& file, const Cursor& cursor) const;

  const check::ProgramIndex& index_;
  const SourceManager& sources_;
  const check::TypeRegistry& types_;
};

/// The qualifier an import makes available, as the loader derives it (`std/images/pytorch`
/// gives `pytorch`) unless `as NAME` says otherwise.
std::string qualifier_of(const ast::Import& import);

/// The declaration `decl` of kind `kind` named `name` in `tree`; nullptr if none.
const ast::Decl* find_decl(const ast::File& tree, const std::string& name, const std::string& kind);

}  // namespace mlenv::lsp
