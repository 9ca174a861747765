#pragma once
// One `mlenvc plan`: open the repository, read the plan committed at HEAD, diff a fresh render
// against it, then write the work tree and commit with a compare-and-swap on the branch.
// Steps are separate so that tests can interleave two sessions.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/diagnostic.h"
#include "compiler/plan/change.h"
#include "compiler/plan/git_repo.h"
#include "compiler/plan/plan_tree.h"

namespace mlenv::plan {

/// Changes of one env since its last apply (`refs/mlenv/applied/<cluster>/<env>`).
struct SinceApplied {
  std::string unit;  ///< `<cluster>/<env>`
  PlanDiff diff;
};

/// Reports E0606: `plan --check` found the plan committed in `prefix` differs from a fresh
/// render of `source`.
void report_stale_check(const std::string& prefix, const std::string& source,
                        Diagnostics& diagnostics);

class PlanSession {
 public:
  /// Opens the repository that will hold the plan directory `out_dir` (relative to the current
  /// directory; "" means `plans/` at the root of the repository containing the current
  /// directory). Reports E0601 or E0605 and returns nullptr when that is not possible.
  static std::unique_ptr<PlanSession> open(const std::string& out_dir, Diagnostics& diagnostics);

  /// The work tree's absolute path, ending with `/`.
  std::string workdir() const { return repo_->workdir(); }
  /// The plan directory relative to the work tree (`plans`).
  const std::string& prefix() const { return prefix_; }
  Repository& repository() { return *repo_; }

  /// Diffs `fresh` (the render of root file `source`) against the committed plan. The render
  /// owns the units it produced and the committed env units whose plan.json names `source`;
  /// other units (rendered from other files) are left alone. Reports E0604 on git failures.
  std::optional<PlanDiff> diff(PlanTree fresh, const std::string& source, Diagnostics& diagnostics);

  /// Writes the commit and moves the branch by compare-and-swap with the HEAD read at open.
  /// Returns the commit id, or nullopt with E0602, E0603 or E0604 reported. Call after diff,
  /// only when it found changes.
  std::optional<ObjectId> commit(const std::string& message, Diagnostics& diagnostics);

  /// Writes the fresh plan into the work tree and, after a commit, updates the index entries
  /// of the files it changed; also repairs the entries of rendered files that HEAD holds as
  /// rendered but the index does not (a plan that committed, then failed). Reports E0604.
  bool write_worktree(bool update_index, Diagnostics& diagnostics);

  /// Warns (W0601) about each of `sources` (path relative to the work tree, and the bytes the
  /// plan was rendered from) that HEAD does not hold with those bytes: the plan would not match
  /// the source its pull request holds. Returns the warnings' messages.
  std::vector<std::string> warn_uncommitted(
      const std::vector<std::pair<std::string, std::string>>& sources,
      Diagnostics& diagnostics) const;

  /// Every owned env that has an applied ref and differs from it.
  std::vector<SinceApplied> since_applied();

 private:
  /// What writing the work tree and the index needs, checked before the branch moves: no held
  /// `index.lock`, an index libgit2 can read (not split or sparse), folders where the plan's
  /// folders go, names of at most 255 bytes. A plan that committed and then failed on these left
  /// the branch moved and the index not, and the user's next commit reverted the plan. False
  /// with E0604.
  bool ready_to_write(Diagnostics& diagnostics) const;
  PlanSession() = default;
  /// Adds the rendered files committed at HEAD whose index entry differs from HEAD.
  void stale_index_entries(std::vector<std::string>& paths,
                           std::vector<std::optional<ObjectId>>& ids) const;

  std::unique_ptr<Repository> repo_;
  std::string prefix_;
  Head head_;
  std::optional<ObjectId> head_tree_;
  PlanTree committed_;  ///< the plan directory at HEAD, paths relative to it
  PlanTree fresh_;
  std::vector<TreeUpdate> updates_;  ///< relative to the plan directory
};

}  // namespace mlenv::plan
