#pragma once
// An env's image on Slurm where mlenvc builds it (no `image.registry`): apply builds it with
// podman, buildah or docker and imports it with enroot into a squashfs named by the image's ID
// under the env's logs/.applied/ (git ignores logs/), and hands that file to the job's script:
// a job that waits in the queue runs the image apply built for it, and a rebuilt image is a new
// file, never one a queued job is about to read. The envs that run one image share it: it is
// built and imported once, and every other env's logs/.applied/ holds a hard link to that one
// squashfs (one file on disk, whichever env leaves first). An image at `image.registry` is
// built and pushed instead, once for the envs that run it, and their jobs pull it by the pushed
// digest (pushed_slurm_image).

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "compiler/apply/apply_session.h"
#include "compiler/apply/env_plan.h"
#include "compiler/diag/diagnostic.h"

namespace mlenv::plan {

/// The trailer that records the squashfs an env's job runs.
inline constexpr std::string_view kSlurmImageTrailer = "Slurm-Image: ";

/// `logs/.applied/image-<64 hex>.sqsh`: the squashfs of the image whose ID is `id_hex`,
/// relative to the env directory.
std::string squashfs_path(std::string_view id_hex);

/// Whether `path` is a path squashfs_path makes (a record's trailer, passed to sbatch).
bool is_squashfs_path(std::string_view path);

/// The squashfs of each image (its local name, `action.image`) that an env of this apply runs
/// and whose inputs are built: an absolute path, which the other envs of the image link to.
using ImportedImages = std::map<std::string, std::string>;

/// The squashfs the job of `env` (its directory `env_dir`, its `submit` action `action`) runs:
/// `recorded` when the image's inputs are those its record applied and the file is there;
/// else a link to the image's squashfs in `imported` (built for an env before this one, or
/// recorded by one whose inputs are these); otherwise the image is built and imported now
/// (unless a squashfs of its ID is there) and added to `imported`. With --dry-run it prints
/// the commands instead. nullopt with E0703 (no builder or enroot on PATH), E0706 (a command
/// failed), E0712 (the build named no image ID) or E0730 (no link or file could be made).
std::optional<std::string> slurm_image(const ApplyRequest& request, const EnvPlan& env,
                                       const std::string& recorded, const std::string& env_dir,
                                       const PlanAction& action, ImportedImages& imported,
                                       std::ostream& out, Diagnostics& diagnostics);

/// The digest reference (`<repository>@sha256:<hex>`) each registry image (a `push` action's
/// `image`) runs by in this apply: pushed for an env before this one, or recorded by one whose
/// image inputs are these.
using PushedImages = std::map<std::string, std::string>;

/// The digest reference the job of `env` runs when its image is at `image.registry` (its `push`
/// action `action`): the record's (`Image-Digest:`) when the image's inputs are those it
/// applied; else the one in `pushed` (the image is pushed once for all its envs); otherwise the
/// image is built and pushed now, the push reports it, and it is added to `pushed`. With
/// --dry-run it prints the commands instead. nullopt with E0703 (no builder on PATH), E0706 (a
/// command failed) or E0712 (the push named no digest).
std::optional<std::string> pushed_slurm_image(const ApplyRequest& request, const EnvPlan& env,
                                              const PlanAction& action, PushedImages& pushed,
                                              std::ostream& out, Diagnostics& diagnostics);

}  // namespace mlenv::plan
