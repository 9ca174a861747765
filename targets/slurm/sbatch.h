#pragma once
// The batch script of one env on a Slurm cluster: `#SBATCH` options, rank 0's address from
// Slurm's own NodeAddr, and `srun` starting one mlenv-boot per node.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlenv::target::slurm {

/// A host directory mounted into the env's container (pyxis `--container-mounts`).
struct Mount {
  std::string source;  ///< on the host; "" for the env directory's workspace/
  std::string target;  ///< in the container
};

/// Everything the script says, already decided by the target. `title` and `job_name` are
/// names (they stand in comments and `#SBATCH` lines as they are).
struct BatchJob {
  std::string title;  ///< `<cluster>/<env>`, for the header comment
  std::string job_name;
  std::string partition;
  std::string account;  ///< "" when the cluster names none
  std::string qos;      ///< ""
  std::string time;     ///< Slurm's `--time` form ("2-00:00:00"), "" when none
  int nodes = 1;
  int gpus_per_node = 0;           ///< 0: no `--gpus-per-node`
  bool exclusive = false;          ///< the env takes whole nodes, and all of their memory
  std::int64_t cpus_per_task = 0;  ///< 0: no `--cpus-per-task` (with exclusive: every CPU)
  std::int64_t mem_mib = 0;        ///< 0: no `--mem` (the partition's default)
  std::string logs_dir;            ///< relative to the submit directory
  std::string config;              ///< boot.json's name in the submit directory
  /// What pyxis runs the env in: an enroot URI (`registry#team/name:tag`) pulled by pyxis, or
  /// with `squashfs_in_envdir` a squashfs file's name in the env directory (`enroot import`);
  /// the script's second argument replaces either (the image apply pushed, by its digest, or
  /// the squashfs it imported); "": the env runs on the host.
  std::string container_image;
  bool squashfs_in_envdir = false;
  std::vector<Mount> mounts;  ///< besides the env directory, which holds boot.json
  /// An acceptance run: `mlenv-boot --nccl-check --results <logs>/<env>-<job id>.results.json`.
  bool nccl_check = false;
};

/// Where the env directory is mounted in the container: mlenv-boot reads boot.json there and
/// an acceptance run writes its results into its logs directory.
inline constexpr std::string_view kContainerEnvDir = "/mlenv";

/// The env directory's folder mounted at /workspace when the cluster names no workspace_dir.
inline constexpr std::string_view kEnvWorkspaceDir = "workspace";

/// Whether `value` can stand in an `#SBATCH` line as it is: sbatch parses those lines itself
/// (whitespace splits, quotes are its own), so only characters with no meaning to it pass.
bool safe_sbatch_value(std::string_view value);

/// Whether `path` can be one side of a pyxis mount (`SRC:DST[:FLAGS]`, comma-separated).
bool safe_mount_path(std::string_view path);

/// The script's text. Values are shell-quoted; `#SBATCH` values must be `safe_sbatch_value`.
std::string batch_script(const BatchJob& job);

/// The enroot URI (`[REGISTRY#]IMAGE[:TAG]`, which pyxis hands to `enroot import` after
/// `docker://`) of the registry image `image`: `host[:port]/path/name:tag` is
/// `host[:port]#path/name:tag`, and a digest reference `.../name@sha256:<hex>` is
/// `...#path/name:sha256:<hex>`, the digest as the tag (enroot 3.0.1 and later).
std::string enroot_uri(std::string_view image);

}  // namespace mlenv::target::slurm
