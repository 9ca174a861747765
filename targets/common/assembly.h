#pragma once
// The target-neutral half of rendering a program: each env is rendered on its own (in
// parallel) into an EnvOutput, and `assemble` merges them in program order into the Output
// every target returns. Shared objects are checked and streamed once, each cluster's `_admin/`
// is written once, `_runtime/` once, notes are grouped and files sorted by path.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/diag/diagnostic.h"
#include "targets/common/env_layout.h"
#include "targets/common/plan_json.h"
#include "targets/target.h"

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

/// The file that lists a cluster's `_admin/` objects for its tools, as the platform writes it.
struct AdminIndex {
  const char* file;                                                 ///< its name in `_admin/`
  std::string (*write)(const std::vector<std::string>& resources);  ///< resources in apply order
};

/// The program's Output from every env's (`rendered[i]` is `layouts[i]`'s, consumed); `tree`
/// adds each cluster's `admin_index` (when the platform has one), the runtime sources and
/// `program_files` (what the whole program emits once, like its `_inputs/` list).
Output assemble(const std::vector<EnvLayout>& layouts, std::vector<EnvOutput> rendered, bool tree,
                Diagnostics& diagnostics, std::vector<File> program_files = {},
                const AdminIndex* admin_index = nullptr);

/// How a platform renders env `i` of `layouts` (every env's, in program order).
using EnvRenderer = std::function<EnvOutput(const std::vector<EnvLayout>& layouts, std::size_t i,
                                            const PlanContext& context, bool tree)>;

/// The render every platform shares: one layout per env (`prepare`, when given, sees them all
/// first, for what envs share), each env rendered in parallel by `render_env`, and the outputs
/// assembled with the program's `_inputs/` file and each cluster's `admin_index`.
Output render_program(const ir::Program& program, ir::Platform platform, Scope scope,
                      Diagnostics& diagnostics, const EnvRenderer& render_env,
                      const AdminIndex* admin_index = nullptr,
                      const std::function<void(const std::vector<EnvLayout>&)>& prepare = {});

/// How a platform renders only env `layout`'s `_admin/` objects, as EnvOutput::admin holds them:
/// a stream writes every cluster's admin objects before any env's objects.
using AdminRenderer =
    std::function<std::vector<std::pair<std::string, File>>(const EnvLayout& layout)>;

/// `render_program`'s stream (Target::stream): each cluster's admin objects, from `render_admin`
/// (empty for a platform that emits none), then the envs rendered in parallel a batch at a time
/// and their objects written in program order, shared objects once; the grouped notes. An env
/// whose rendered admin objects `render_admin` did not give is a target bug: std::logic_error.
std::vector<std::string> stream_program(
    const ir::Program& program, ir::Platform platform, Diagnostics& diagnostics,
    const EnvRenderer& render_env, const AdminRenderer& render_admin, const ObjectSink& write,
    const std::function<void(const std::vector<EnvLayout>&)>& prepare = {});

}  // namespace mlenv::target
