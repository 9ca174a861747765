#pragma once
// A Slurm job runs the boot.json apply checked. A job may wait in the queue for days and reads
// its files only when it starts; by then a later `mlenvc plan` may have rewritten boot.json in
// the work tree, unapplied. apply therefore copies the committed boot.json to a file named by
// its blob id and passes that file to the batch script, which sbatch copies at submit.

#include <optional>
#include <string>

#include "compiler/apply/env_plan.h"

namespace mlenv::plan {

/// The boot.json a batch script reads when no copy is passed, relative to the env directory.
inline constexpr std::string_view kSlurmBootConfig = "boot.json";

/// Where apply copies an env's boot.json, relative to the env directory:
/// `logs/.applied/boot-<blob id>.json`. Inside logs/, which the tree's logs/.gitignore ignores,
/// so the copy never makes the env differ from HEAD; named by content, so two applies of
/// different plans never share a file and a job's copy never changes under it.
std::string pinned_config_path(const BlobId& id);

/// Where apply keeps what a job reads besides its committed files, relative to the env
/// directory: `logs/.applied` (git ignores logs/).
inline constexpr std::string_view kAppliedDir = "logs/.applied";

/// Makes `<env_dir>/logs/.applied` a real directory (a symbolic link on the way is refused);
/// false with `error`.
bool make_applied_dir(const std::string& env_dir, std::string& error);

/// Writes `env`'s committed boot.json (HEAD's bytes, which apply checked) to pinned_config_path
/// under the work-tree directory `env_dir`, through a temporary file and a rename, never through
/// a symbolic link on the way; returns the relative path (the script's first argument), or
/// nullopt with `error`.
std::optional<std::string> pin_boot_config(const EnvPlan& env, const std::string& env_dir,
                                           std::string& error);

}  // namespace mlenv::plan
