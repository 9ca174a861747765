#pragma once
// The target-neutral half of rendering a program: each env is rendered on its own (in
// parallel) into an EnvOutput, and `assemble` merges them in program order into the Output
// every target returns. Shared objects are checked and streamed once, each cluster's `_admin/`
// is written once, `_runtime/` once, notes are grouped and files sorted by path.

#include <map>
#include <string>
#include <vector>

#include "compiler/diag/diagnostic.h"
#include "platforms/common/env_layout.h"
#include "platforms/target.h"

namespace mlenv::target {

/// A line for people about `subject` (an env directory, or "" for the program), grouped with
/// the same text of other envs.
struct Note {
  std::string subject;
  std::string text;
};

/// What one env renders, before the program-wide merge.
struct EnvOutput {
  std::vector<File> files;  ///< `<cluster>/<env>/...`, its objects first, in apply order
  std::size_t objects = 0;  ///< how many of `files` are objects
  std::vector<std::pair<std::string, File>> admin;          ///< (address, `_admin/` file)
  std::vector<std::pair<std::string, std::size_t>> shared;  ///< (address, index in files)
  std::vector<Note> notes;
  Diagnostics diagnostics;
};

/// Objects several envs emit (Object::shared), by where they live on the API server: each must
/// have the same bytes wherever it is emitted (E0413, reported once per object).
class SharedObjects {
 public:
  /// Whether this is the first env to emit the object at `address` with `bytes`.
  bool add(const EnvLayout& layout, const std::string& address, const std::string& bytes,
           Diagnostics& diagnostics);

 private:
  struct First {
    const ir::Env* env;
    std::string bytes;
    bool reported;
  };
  std::map<std::string, First> seen_;
};

/// One line per distinct note, naming the envs it concerns (a fleet's 10,000 envs that fall
/// back to TCP on one cluster make one line, not 10,000).
std::vector<std::string> grouped(const std::vector<Note>& notes);

/// The program's Output from every env's (`rendered[i]` is `layouts[i]`'s, consumed); `tree`
/// adds the `_admin/` kustomizations, the runtime sources and `program_files` (what the whole
/// program emits once, like its `_inputs/` list).
Output assemble(const std::vector<EnvLayout>& layouts, std::vector<EnvOutput> rendered, bool tree,
                Diagnostics& diagnostics, std::vector<File> program_files = {});

}  // namespace mlenv::target
