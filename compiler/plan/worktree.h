#pragma once
// The plan files in the work tree: the plan writer is the only code that writes them, and apply
// reads them only to prove they are exactly what is committed.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/plan/plan_tree.h"

namespace mlenv::plan {

/// Writes every file of `tree` under directory `root` whose bytes on disk differ, and deletes
/// `removed` (paths relative to `root`) and the directories they leave empty. Never writes or
/// deletes through a symbolic link: a link on the way to a file, or at the file, is replaced by
/// a real directory or file. Returns the paths written or removed. Throws std::runtime_error
/// when a file cannot be written.
/// `unchanged(path)` may say a file is known to hold its bytes already (its index entry has
/// the blob and the file's stat data), which then is not read.
std::vector<std::string> write_plan_files(
    const std::string& root, const PlanTree& tree, const std::vector<std::string>& removed,
    const std::function<bool(const std::string& path)>& unchanged = {});

/// Files under `root/dir` (and the extra paths listed) whose work-tree bytes differ from
/// `committed` (paths relative to `root`): edited, missing, or present but not committed,
/// except files not committed that `ignored` says git ignores (a Slurm job's `logs/`).
std::vector<std::string> uncommitted_files(
    const std::string& root, const std::string& dir, const std::vector<std::string>& extra,
    const PlanTree& committed,
    const std::function<bool(const std::string&)>& ignored = [](const std::string&) {
      return false;
    });

}  // namespace mlenv::plan
