#include "compiler/check/launcher.h"

#include <algorithm>
#include <optional>
#include <string_view>

namespace mlenv::check {
namespace {

std::string_view basename(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_python(std::string_view word) {
  word = basename(word);
  if (!word.starts_with("python")) return false;
  // python, python3, python3.12
  return std::all_of(word.begin() + 6, word.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

bool is_env_assignment(std::string_view word) {
  std::size_t eq = word.find('=');
  return eq != std::string_view::npos && eq > 0 && !word.starts_with('-');
}

// The options of a wrapper that take a value as the next word (`-n base`); `strict`: any other
// option makes the wrapper one mlenvc does not understand, else it is a flag.
struct WrapperOptions {
  std::vector<std::string_view> with_value;
  std::vector<std::string_view> flags;
  bool strict = false;
};

bool contains(const std::vector<std::string_view>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// The word after a wrapper's options, from `i`; nothing when an option is not understood.
std::optional<std::size_t> skip_options(const std::vector<std::string>& command, std::size_t i,
                                        const WrapperOptions& options) {
  while (i < command.size() && command[i].starts_with('-')) {
    const std::string& word = command[i];
    if (word == "--") return i + 1;
    std::string_view option = std::string_view(word).substr(0, word.find('='));
    const bool inline_value =
        word.find('=') != std::string::npos || (!word.starts_with("--") && word.size() > 2 &&
                                                contains(options.with_value, word.substr(0, 2)));
    if (contains(options.with_value, option) || inline_value) {
      i += inline_value ? 1 : 2;
    } else if (contains(options.flags, option) || !options.strict) {
      i += 1;
    } else {
      return std::nullopt;
    }
  }
  return i;
}

// The options of the wrappers that run a program in an environment and keep its arguments: GNU
// env (coreutils env.c `longopts`), `uv run` (docs.astral.sh/uv/reference/cli/#uv-run),
// `conda run` (conda/cli/main_run.py; mamba and micromamba take the same) and `pixi run`
// (pixi.sh/latest/reference/cli/pixi/run). `env` is strict: `-S` splits its argument into
// words, which mlenv-boot would not see.
const WrapperOptions kEnvOptions{{"-u", "--unset", "-C", "--chdir"},
                                 {"-i", "--ignore-environment", "-0", "--null", "-v", "--debug"},
                                 true};
const WrapperOptions kUvRunOptions{{"--with",
                                    "-w",
                                    "--with-editable",
                                    "--with-requirements",
                                    "--extra",
                                    "--no-extra",
                                    "--group",
                                    "--no-group",
                                    "--only-group",
                                    "--package",
                                    "--project",
                                    "--directory",
                                    "--python",
                                    "-p",
                                    "--env-file",
                                    "--index",
                                    "--default-index",
                                    "--index-url",
                                    "-i",
                                    "--extra-index-url",
                                    "--find-links",
                                    "-f",
                                    "--cache-dir",
                                    "--config-file",
                                    "--color"},
                                   {},
                                   false};
const WrapperOptions kCondaRunOptions{
    {"-n", "--name", "-p", "--prefix", "--cwd", "-a", "--attach"}, {}, false};
const WrapperOptions kPixiRunOptions{
    {"-e", "--environment", "--manifest-path", "--executable", "--color"}, {}, false};

// The word after the wrapper that starts at `i` (with its options and, for env, assignments);
// nothing when `command[i]` is no wrapper, or one whose options are not understood.
std::optional<std::size_t> skip_wrapper(const std::vector<std::string>& command, std::size_t i) {
  std::string_view name = basename(command[i]);
  const bool run = i + 1 < command.size() && command[i + 1] == "run";
  if (name == "env") {
    std::optional<std::size_t> next = skip_options(command, i + 1, kEnvOptions);
    while (next && *next < command.size() && is_env_assignment(command[*next])) ++*next;
    return next;
  }
  if (name == "uv" && run) return skip_options(command, i + 2, kUvRunOptions);
  if ((name == "conda" || name == "mamba" || name == "micromamba") && run) {
    return skip_options(command, i + 2, kCondaRunOptions);
  }
  if (name == "pixi" && run) return skip_options(command, i + 2, kPixiRunOptions);
  return std::nullopt;
}

// The first word that is not part of a wrapper: `env NCCL_DEBUG=INFO uv run torchrun` → 4.
std::size_t skip_wrappers(const std::vector<std::string>& command) {
  std::size_t i = 0;
  while (i < command.size()) {
    std::optional<std::size_t> next = skip_wrapper(command, i);
    if (!next || *next == i) break;
    i = *next;
  }
  return i;
}

// The launcher a module run with `python -m` is: torch.distributed.launch is the deprecated
// front of torch.distributed.run with the same node options (torch/distributed/launch.py);
// DeepSpeed's and Accelerate's console scripts call these modules' `main`
// (DeepSpeed bin/deepspeed; accelerate setup.py `accelerate-launch`).
std::string module_launcher(std::string_view module) {
  if (module == "torch.distributed.run" || module == "torch.distributed.launch") return "torchrun";
  if (module == "deepspeed.launcher.runner") return "deepspeed";
  if (module == "accelerate.commands.launch") return "accelerate";
  return "";
}

// The launcher a module name reads like, understood or not: "" for any other module.
std::string module_family(std::string_view module) {
  if (module.starts_with("torch.distributed.")) return "torchrun";
  if (module == "deepspeed" || module.starts_with("deepspeed.launcher")) return "deepspeed";
  if (module.starts_with("accelerate.commands")) return "accelerate";
  return "";
}

// A module named from `i` on (`-m name` or `-mname`): the module and the words it took.
struct ModuleWords {
  std::string module;
  std::size_t words = 0;
};

std::optional<ModuleWords> module_at(const std::vector<std::string>& command, std::size_t i) {
  if (i >= command.size()) return std::nullopt;
  if (command[i] == "-m" && i + 1 < command.size()) return ModuleWords{command[i + 1], 2};
  if (command[i].starts_with("-m") && command[i].size() > 2) {
    return ModuleWords{command[i].substr(2), 1};
  }
  return std::nullopt;
}

// The word after the interpreter options of `python` at `i` (`-u`, `-X dev`, ...), up to `-m`.
std::size_t skip_python_options(const std::vector<std::string>& command, std::size_t i) {
  while (i < command.size() && command[i].starts_with('-') && command[i].size() > 1 &&
         !command[i].starts_with("-m") && command[i] != "-c" && command[i] != "--") {
    i += (command[i] == "-X" || command[i] == "-W") ? 2 : 1;
  }
  return i;
}

// The launcher named at `i` and how many words name it.
Launcher launcher_at(const std::vector<std::string>& command, std::size_t i) {
  std::string_view first = basename(command[i]);
  if (first == "torchrun") return {"torchrun", 1};
  if (first == "deepspeed") return {"deepspeed", 1};
  if (first == "accelerate-launch") return {"accelerate", 1};
  if (first == "accelerate" && i + 1 < command.size() && command[i + 1] == "launch") {
    return {"accelerate", 2};
  }
  if (!is_python(first)) return {};
  std::size_t at = skip_python_options(command, i + 1);
  std::optional<ModuleWords> module = module_at(command, at);
  if (!module) return {};
  std::string kind = module_launcher(module->module);
  if (kind.empty()) return {};
  return {kind, at + module->words - i};
}

// Options each launcher takes that mlenv-boot fills in from the rendezvous (torchrun:
// torch/distributed/run.py; DeepSpeed: deepspeed/launcher/runner.py; Accelerate:
// accelerate/commands/launch.py), and DeepSpeed's options of a launch over ssh/pdsh, which the
// image has no daemon for.
struct Options {
  std::vector<std::string_view> node;
  std::vector<std::string_view> ssh;
  std::vector<std::string_view> flags;  ///< options that take no value
};

const Options& options_of(const std::string& kind) {
  static const Options torchrun{
      {"--nnodes", "--node-rank", "--node_rank", "--master-addr", "--master_addr", "--master-port",
       "--master_port", "--nproc-per-node", "--nproc_per_node", "--rdzv-endpoint",
       "--rdzv_endpoint", "--rdzv-backend", "--rdzv_backend", "--standalone"},
      {},
      {"--standalone", "--no-python", "--no_python", "--run-path", "--run_path", "--module", "-m"}};
  static const Options deepspeed{
      {"--num_nodes", "--num_gpus", "--node_rank", "--master_addr", "--master_port", "--no_ssh",
       "--include", "-i", "--exclude", "-e"},
      {"--hostfile", "-H", "--launcher", "--ssh_port", "--launcher_args", "--force_multi"},
      {"--no_ssh", "--force_multi", "--no_python", "--module", "--no_local_rank", "--save_pid",
       "--enable_each_rank_log", "--autotuning", "--bind_cores_to_rank"}};
  static const Options accelerate{
      {"--num_machines", "--machine_rank", "--main_process_ip", "--main_process_port",
       "--num_processes", "--same_network", "--rdzv_backend"},
      {},
      {"--multi_gpu", "--cpu", "--same_network", "--mixed_precision", "--use_deepspeed",
       "--use_fsdp", "-m", "--module", "--no_python", "--debug"}};
  static const Options none;
  if (kind == "torchrun") return torchrun;
  if (kind == "deepspeed") return deepspeed;
  if (kind == "accelerate") return accelerate;
  return none;
}

}  // namespace

Launcher classify_launcher(const std::vector<std::string>& command) {
  std::size_t at = skip_wrappers(command);
  if (at >= command.size()) return {};
  Launcher launcher = launcher_at(command, at);
  if (launcher.kind.empty()) return {};
  return {launcher.kind, at + launcher.prefix};
}

std::optional<LauncherMention> find_launcher_word(const std::vector<std::string>& words,
                                                  std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end && i < words.size(); ++i) {
    std::string_view name = basename(words[i]);
    if (name == "torchrun" || name == "deepspeed")
      return LauncherMention{i, std::string(name), std::string(name)};
    if (name == "accelerate-launch") return LauncherMention{i, "accelerate-launch", "accelerate"};
    if (name == "accelerate" && i + 1 < words.size() && words[i + 1] == "launch") {
      return LauncherMention{i, "accelerate launch", "accelerate"};
    }
    if (std::optional<ModuleWords> module = module_at(words, i)) {
      std::string kind = module_family(module->module);
      if (!kind.empty()) return LauncherMention{i, "-m " + module->module, kind};
    }
  }
  return std::nullopt;
}

std::optional<LauncherMention> unrecognised_launcher(const std::vector<std::string>& command) {
  if (!classify_launcher(command).kind.empty()) return std::nullopt;
  // The words before the program's script: a launcher named after it is the script's argument.
  std::size_t script = 0;
  while (script < command.size() && !command[script].ends_with(".py") &&
         !command[script].ends_with(".sh")) {
    ++script;
  }
  return find_launcher_word(command, 0, script);
}

std::vector<LauncherConflict> launcher_conflicts(const std::vector<std::string>& command,
                                                 const Launcher& launcher) {
  std::vector<LauncherConflict> out;
  const Options& options = options_of(launcher.kind);
  // The launcher's own options come before the script; what follows the script is its own.
  for (std::size_t i = launcher.prefix; i < command.size(); ++i) {
    const std::string& word = command[i];
    if (!word.starts_with("-")) break;
    std::string option = word.substr(0, word.find('='));
    if (contains(options.ssh, option)) {
      out.push_back({i, option, true});
    } else if (contains(options.node, option)) {
      out.push_back({i, option, false});
    }
    bool takes_value = word.find('=') == std::string::npos && !contains(options.flags, option);
    if (takes_value) ++i;
  }
  return out;
}

std::string launcher_example(const std::vector<std::string>& command, const Launcher& launcher) {
  std::string out;
  for (std::size_t i = 0; i < launcher.prefix && i < command.size(); ++i) {
    out += (i ? " " : "") + command[i];
  }
  if (launcher.kind == "torchrun") {
    out += " --nnodes=N --node_rank=R --master_addr=A --master_port=P --nproc_per_node=G";
  } else if (launcher.kind == "deepspeed") {
    out +=
        " --hostfile=H --no_ssh --num_nodes=N --node_rank=R --master_addr=A --master_port=P "
        "--num_gpus=G";
  } else if (launcher.kind == "accelerate") {
    out +=
        " --num_machines=N --machine_rank=R --main_process_ip=A --main_process_port=P "
        "--num_processes=N*G";
  }
  auto conflicts = launcher_conflicts(command, launcher);
  for (std::size_t i = launcher.prefix; i < command.size(); ++i) {
    bool dropped = std::any_of(conflicts.begin(), conflicts.end(),
                               [&](const LauncherConflict& c) { return c.index == i; });
    if (dropped) {
      const std::string& word = command[i];
      const Options& options = options_of(launcher.kind);
      std::string option = word.substr(0, word.find('='));
      if (word.find('=') == std::string::npos && !contains(options.flags, option)) ++i;
      continue;
    }
    out += " " + command[i];
  }
  return out;
}

}  // namespace mlenv::check
