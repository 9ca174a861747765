#pragma once
// What kind of program an env's `command` is. mlenv-boot is the launcher of every node: it
// starts a worker program `nproc_per_node` times with the torchrun environment, or a launcher
// (torchrun, deepspeed, accelerate) once per node with the node-level arguments it computes at
// start (node rank, master address). Those arguments are mlenv-boot's alone, so a command that
// already passes one is refused (E0410), as is DeepSpeed's multi-host launch over ssh (E0414).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mlenv::check {

/// A command's launcher: `kind` "" for a worker program, else "torchrun", "deepspeed" or
/// "accelerate"; `prefix` is how many words name the launcher, the wrappers before it included
/// (`env NCCL_DEBUG=INFO python -m torch.distributed.run` is five): mlenv-boot inserts its
/// arguments after them and keeps the wrappers.
struct Launcher {
  std::string kind;
  std::size_t prefix = 0;
};

/// Classifies `command` by its first words: wrappers that run a program in an environment and
/// keep its arguments (`env [-u N] [NAME=VALUE]...`, `uv run`, `conda run`, `mamba run`,
/// `micromamba run`, `pixi run`, each with its options), then a launcher: `torchrun`,
/// `deepspeed`, `accelerate launch`, `accelerate-launch`, or `python [options] -m` with
/// torch.distributed.run, torch.distributed.launch, deepspeed.launcher.runner or
/// accelerate.commands.launch.
Launcher classify_launcher(const std::vector<std::string>& command);

/// A word that names a launcher, as written (`torchrun`, `-m torch.distributed.run`), and the
/// launcher it reads like.
struct LauncherMention {
  std::size_t index = 0;
  std::string name;
  std::string kind;
};

/// The first word of `words[begin, end)` that names a launcher, recognised or not.
std::optional<LauncherMention> find_launcher_word(const std::vector<std::string>& words,
                                                  std::size_t begin, std::size_t end);

/// A launcher that `command` names before its script but `classify_launcher` does not
/// recognise (`sudo torchrun`, `env -S ...`, `python -m torch.distributed.elastic...`):
/// mlenv-boot would start the command once per GPU as a worker program.
std::optional<LauncherMention> unrecognised_launcher(const std::vector<std::string>& command);

/// A launcher option of `command` that mlenv-boot must set itself or that cannot work in a pod.
struct LauncherConflict {
  std::size_t index = 0;   ///< the word of `command`
  std::string option;      ///< as written, without `=value`
  bool needs_ssh = false;  ///< a multi-host launch over ssh (E0414) rather than a node argument
};

/// The launcher options of `command` (before its script) that conflict with mlenv-boot.
std::vector<LauncherConflict> launcher_conflicts(const std::vector<std::string>& command,
                                                 const Launcher& launcher);

/// The command mlenv-boot would run on node 0 of `nnodes`, for explanations: the launcher's
/// words, then the arguments mlenv-boot inserts, then the rest.
std::string launcher_example(const std::vector<std::string>& command, const Launcher& launcher);

}  // namespace mlenv::check
