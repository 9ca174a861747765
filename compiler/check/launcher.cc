#include "compiler/check/launcher.h"

#include <algorithm>
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

bool contains(const std::vector<std::string_view>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

}  // namespace

Launcher classify_launcher(const std::vector<std::string>& command) {
  if (command.empty()) return {};
  std::string_view first = basename(command[0]);
  if (first == "torchrun") return {"torchrun", 1};
  if (first == "deepspeed") return {"deepspeed", 1};
  if (first == "accelerate" && command.size() > 1 && command[1] == "launch") {
    return {"accelerate", 2};
  }
  if (is_python(first) && command.size() > 2 && command[1] == "-m" &&
      command[2] == "torch.distributed.run") {
    return {"torchrun", 3};
  }
  return {};
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
