#pragma once
// The renderer every provider (targets/provider.h) owns: a pure function from the typed
// program to files. Nothing here names a platform.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/diag/diagnostic.h"
#include "compiler/ir/program.h"

namespace mlenv::target {

/// One output file, its path relative to the output root (`<cluster>/<env>/statefulset.yaml`,
/// `<cluster>/_admin/scc-ipc-lock.yaml`), and its exact bytes.
struct File {
  std::string path;
  std::string content;
};

/// Everything a target renders for a program: files sorted by path. Every env directory
/// holds a `plan.json` (compiler/plan/PLAN_JSON.md) describing its objects.
struct Output {
  std::vector<File> files;
  /// Indices into `files` of every object, in apply order, each cluster-scoped object once and
  /// each object that envs share (one namespace's attachments) once: the multi-document stream
  /// of `mlenvc build -o -`.
  std::vector<std::size_t> stream;
  /// Lines for people about steps the output needs (who must apply `_admin/`, which Secrets
  /// to create), printed by `mlenvc build`; never part of the files.
  std::vector<std::string> notes;
  /// The same notes before grouping, once per env they concern (`subject`: `<cluster>/<env>`,
  /// "" for a note about no one env), in render order: `plan --format=json` keeps the full list.
  std::vector<std::pair<std::string, std::string>> note_details;
};

/// How much `render` produces.
enum class Scope : unsigned char {
  /// The whole output tree: objects, Dockerfiles, boot.json, kustomizations, plan.json with the
  /// hash of every file, and the runtime sources (`build -o DIR`, `plan`, `apply`).
  Tree,
  /// Only the object files and the stream (`build -o -`, `build --openapi`): nothing is hashed.
  Objects,
};

/// Receives the objects of the `build -o -` stream, one at a time, in stream order.
using ObjectSink = std::function<void(const File& object)>;

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string_view name() const = 0;
  /// Renders every env. Rules that need emitted objects report into `diagnostics`; when they
  /// report errors the output must not be used. Both scopes give the same objects, byte for byte.
  virtual Output render(const ir::Program& program, Diagnostics& diagnostics,
                        Scope scope) const = 0;
  /// Only the rules of `render` (`mlenvc check`): the same diagnostics, no files. Returns
  /// lines for people about what the cluster must have for the program (controllers to
  /// install, namespace settings), which `check` prints. The default renders and keeps only the
  /// notes; a target overrides it where that is cheaper.
  virtual std::vector<std::string> check(const ir::Program& program,
                                         Diagnostics& diagnostics) const {
    return render(program, diagnostics, Scope::Objects).notes;
  }
  /// The objects of `render(program, diagnostics, Scope::Objects).stream`, the same bytes in the
  /// same order, handed to `write` while envs are still being rendered, so that a fleet's stream
  /// is never held whole (`build -o -`); returns the notes of that render. What is written stays
  /// written when a rule reports an error midway: callers run `check` first, which reports what
  /// a program can break. The default renders everything, then writes.
  virtual std::vector<std::string> stream(const ir::Program& program, Diagnostics& diagnostics,
                                          const ObjectSink& write) const {
    Output out = render(program, diagnostics, Scope::Objects);
    for (std::size_t i : out.stream) write(out.files[i]);
    return out.notes;
  }
};

/// The target of `platform`: its provider's (targets/provider.h).
const Target& make_target(ir::Platform platform);

/// The target of whole programs (`check`, `build`, `plan`, `apply`): each env is rendered by the
/// target of its cluster's platform, and the outputs are merged (files sorted by path, streams
/// in the order of ir::Platform).
std::unique_ptr<Target> make_program_target();

}  // namespace mlenv::target
