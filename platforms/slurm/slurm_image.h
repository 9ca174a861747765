#pragma once
// An env's image on Slurm where mlenvc builds it (no `image.registry`): apply builds it with
// podman, buildah or docker and imports it with enroot into a squashfs named by the image's ID
// under the env's logs/.applied/ (git ignores logs/), and hands that file to the job's script:
// a job that waits in the queue runs the image apply built for it, and a rebuilt image is a new
// file, never one a queued job is about to read.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "compiler/apply/apply_session.h"
#include "compiler/diag/diagnostic.h"
#include "platforms/kube/apply/steps.h"

namespace mlenv::plan {

/// The trailer that records the squashfs an env's job runs.
inline constexpr std::string_view kSlurmImageTrailer = "Slurm-Image: ";

/// `logs/.applied/image-<64 hex>.sqsh`: the squashfs of the image whose ID is `id_hex`,
/// relative to the env directory.
std::string squashfs_path(std::string_view id_hex);

/// Whether `path` is a path squashfs_path makes (a record's trailer, passed to sbatch).
bool is_squashfs_path(std::string_view path);

/// The squashfs the job of `env` (its directory `env_dir`, its `submit` action `action`) runs:
/// `recorded` when the image's inputs are those its record applied and the file is there;
/// otherwise the image is built and imported now (unless a squashfs of its ID is there). With
/// --dry-run it prints the commands instead. nullopt with E0703 (no builder or enroot on PATH),
/// E0706 (a command failed) or E0712 (the build named no image ID).
std::optional<std::string> slurm_image(const ApplyRequest& request, const EnvPlan& env,
                                       const std::string& recorded, const std::string& env_dir,
                                       const PlanAction& action, std::ostream& out,
                                       Diagnostics& diagnostics);

}  // namespace mlenv::plan
