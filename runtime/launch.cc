#include "launch.h"

#include <algorithm>

namespace boot {
namespace {

// The last path component, so /usr/bin/python3 is recognised as python3.
std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// torchrun's agent variables (torch/distributed/elastic/agent/server/local_elastic_agent.py) and
// DeepSpeed's (deepspeed/launcher/launch.py): a launcher computes them for its own workers.
constexpr const char* kWorkerOnly[] = {"RANK",
                                       "LOCAL_RANK",
                                       "ROLE_RANK",
                                       "WORLD_SIZE",
                                       "LOCAL_WORLD_SIZE",
                                       "GROUP_RANK",
                                       "GROUP_WORLD_SIZE",
                                       "ROLE_NAME",
                                       "ROLE_WORLD_SIZE",
                                       "TORCHELASTIC_RESTART_COUNT",
                                       "TORCHELASTIC_MAX_RESTARTS",
                                       "TORCHELASTIC_RUN_ID",
                                       "TORCHELASTIC_USE_AGENT_STORE",
                                       "CROSS_RANK",
                                       "CROSS_SIZE",
                                       "LOCAL_SIZE"};

}  // namespace

size_t launcher_prefix_length(const std::string& launcher,
                              const std::vector<std::string>& command) {
  if (launcher == "torchrun" && command.size() >= 3 &&
      base_name(command[0]).starts_with("python") && command[1] == "-m" &&
      command[2] == "torch.distributed.run") {
    return 3;
  }
  if (launcher == "accelerate" && command.size() >= 2 && command[1] == "launch") return 2;
  return command.empty() ? 0 : 1;
}

std::vector<std::string> launcher_argv(const std::string& launcher,
                                       const std::vector<std::string>& command,
                                       const NodeShape& shape, size_t prefix_words) {
  std::string n = std::to_string(shape.nnodes);
  std::string r = std::to_string(shape.node_rank);
  std::string p = std::to_string(shape.master_port);
  std::string g = std::to_string(shape.nproc_per_node);
  std::vector<std::string> inserted;
  if (launcher == "torchrun") {
    // torch.distributed.run's own flags (docs.pytorch.org/docs/stable/elastic/run.html).
    inserted = {"--nnodes=" + n, "--node_rank=" + r, "--master_addr=" + shape.master_addr,
                "--master_port=" + p, "--nproc_per_node=" + g};
  } else if (launcher == "deepspeed") {
    // deepspeed/launcher/runner.py: --no_ssh runs this node's share only, as each pod must
    // (DeepSpeed 0.14.5+). The world comes from the hostfile: without one the runner knows
    // only localhost and refuses --num_nodes > 1 ("no extra nodes available via hostfile").
    inserted = {"--no_ssh",           "--num_nodes=" + n,
                "--node_rank=" + r,   "--master_addr=" + shape.master_addr,
                "--master_port=" + p, "--num_gpus=" + g};
    if (!shape.hostfile.empty()) inserted.insert(inserted.begin(), "--hostfile=" + shape.hostfile);
  } else if (launcher == "accelerate") {
    // `accelerate launch` counts processes over all machines (huggingface.co/docs/accelerate).
    inserted = {"--num_machines=" + n, "--machine_rank=" + r,
                "--main_process_ip=" + shape.master_addr, "--main_process_port=" + p,
                "--num_processes=" + std::to_string(shape.nnodes * shape.nproc_per_node)};
  }
  size_t prefix = prefix_words > 0 ? std::min(prefix_words, command.size())
                                   : launcher_prefix_length(launcher, command);
  std::vector<std::string> argv(command.begin(), command.begin() + static_cast<long>(prefix));
  argv.insert(argv.end(), inserted.begin(), inserted.end());
  argv.insert(argv.end(), command.begin() + static_cast<long>(prefix), command.end());
  return argv;
}

EnvMap launcher_environment(const EnvMap& user, const NodeEnvironment& env,
                            const NodeShape& shape) {
  EnvMap out = user;
  for (const auto& [name, value] : env.common) out[name] = value;
  for (const char* name : kWorkerOnly) out.erase(name);
  out["MASTER_ADDR"] = shape.master_addr;
  out["MASTER_PORT"] = std::to_string(shape.master_port);
  out["NNODES"] = std::to_string(shape.nnodes);
  out["NODE_RANK"] = std::to_string(shape.node_rank);
  return out;
}

LaunchSpec plan_launch(const BootConfig& config, const std::vector<std::string>& command,
                       const std::string& launcher, const JobPlan& plan, int node_rank,
                       const EnvMap& user, const NodeEnvironment& env) {
  LaunchSpec launch;
  launch.grace_s = config.grace_s;
  NodeShape shape{plan.nnodes,      node_rank,           plan.master_addr,
                  plan.master_port, plan.nproc_per_node, config.hostfile};
  if (!command.empty() && !launcher.empty()) {
    launch.workers.push_back({"launcher " + launcher,
                              launcher_argv(launcher, command, shape, config.launcher_words),
                              launcher_environment(user, env, shape)});
  } else if (!command.empty()) {
    for (int local = 0; local < plan.nproc_per_node; ++local) {
      launch.workers.push_back(
          {"worker " + std::to_string(local), command, worker_environment(user, env, local)});
    }
  }
  // Services (code-server, jupyter) are reached through rank 0's Service and Route only, as in
  // the seeds' entrypoint; a copy on every node would only hold memory and ports.
  if (node_rank == 0) {
    EnvMap service_env = user;
    for (const auto& [name, value] : env.common) service_env[name] = value;
    for (const Service& service : config.services) {
      launch.services.push_back({"service " + service.name, service.argv, service_env});
    }
  }
  return launch;
}

}  // namespace boot
