#include "environment.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "log.h"
#include "util.h"

namespace boot {

std::string choose_socket_interface(const std::vector<std::string>& candidates,
                                    const std::string& reached,
                                    const std::function<bool(const std::string&)>& exists) {
  if (candidates.empty() ||
      std::find(candidates.begin(), candidates.end(), reached) != candidates.end()) {
    return reached;
  }
  for (const std::string& candidate : candidates) {
    if (exists(candidate)) return candidate;
  }
  return reached;
}

namespace {

// Sets a variable the user may tune; the user's value wins and is recorded as kept.
void prefer_user(NodeEnvironment& env, const EnvMap& user, const std::string& name,
                 const std::string& value) {
  if (std::optional<std::string> theirs = lookup(user, name)) {
    env.common[name] = *theirs;
    env.kept_from_user.push_back(name);
  } else {
    env.common[name] = value;
  }
}

void nccl_variables(NodeEnvironment& env, const BootConfig& config, const JobPlan& plan,
                    const ProbeResult& probe, const std::string& socket_interface,
                    const EnvMap& user, bool nccl_needs_gid_index) {
  prefer_user(env, user, "NCCL_DEBUG", "WARN");
  if (!socket_interface.empty()) {
    // "=" makes NCCL match the exact name; a bare "eth" would also match "eth10".
    prefer_user(env, user, "NCCL_SOCKET_IFNAME", "=" + socket_interface);
  }
  if (plan.transport != "rdma") {
    prefer_user(env, user, "NCCL_IB_DISABLE", "1");
    return;
  }
  prefer_user(env, user, "NCCL_IB_DISABLE", "0");
  std::vector<std::string> hcas;
  std::set<int> roce_gids;
  for (const RdmaPort& port : probe.ports) {
    if (!port.usable) continue;
    hcas.push_back(port.device + ":" + std::to_string(port.port));
    if (port.link_layer == "Ethernet") roce_gids.insert(port.gid_index);
  }
  // Exact match, with the port: NCCL's prefix match would let mlx5_1 also select mlx5_10..19.
  if (!hcas.empty()) prefer_user(env, user, "NCCL_IB_HCA", "=" + join(hcas, ","));
  if (config.gid_index) {
    prefer_user(env, user, "NCCL_IB_GID_INDEX", std::to_string(*config.gid_index));
  } else if (nccl_needs_gid_index && roce_gids.size() == 1) {
    prefer_user(env, user, "NCCL_IB_GID_INDEX", std::to_string(*roce_gids.begin()));
  } else if (nccl_needs_gid_index && roce_gids.size() > 1) {
    log_warning(
        "RoCE ports use different GID indices and this NCCL cannot pick them itself; "
        "set rdma.gid_index in the environment's network");
  }
  if (config.gdr_level) prefer_user(env, user, "NCCL_NET_GDR_LEVEL", *config.gdr_level);
}

void write_lines(const std::string& path, const std::vector<std::string>& lines, const char* what) {
  if (path.empty()) return;
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  if (!make_parent_dirs(path) || !write_file_atomic(path, text)) {
    log_warning(std::string("cannot write the ") + what + " " + path);
  }
}

}  // namespace

NodeEnvironment build_environment(const BootConfig& config, const JobPlan& plan, int node_rank,
                                  const ProbeResult& probe, const std::string& socket_interface,
                                  const EnvMap& user, bool nccl_needs_gid_index) {
  NodeEnvironment env;
  nccl_variables(env, config, plan, probe, socket_interface, user, nccl_needs_gid_index);
  std::vector<std::string> nccl_lines;
  for (const auto& [name, value] : env.common) nccl_lines.push_back(name + "=" + value);

  // torchrun's own set (torch/distributed/elastic/agent/server/local_elastic_agent.py).
  std::string nproc = std::to_string(plan.nproc_per_node);
  std::string world = std::to_string(plan.world_size());
  std::string nnodes = std::to_string(plan.nnodes);
  env.common["MASTER_ADDR"] = plan.master_addr;
  env.common["MASTER_PORT"] = std::to_string(plan.master_port);
  env.common["WORLD_SIZE"] = world;
  env.common["LOCAL_WORLD_SIZE"] = nproc;
  env.common["GROUP_RANK"] = std::to_string(node_rank);
  env.common["GROUP_WORLD_SIZE"] = nnodes;
  env.common["ROLE_NAME"] = "default";
  env.common["ROLE_WORLD_SIZE"] = world;
  env.common["TORCHELASTIC_RESTART_COUNT"] = "0";
  env.common["TORCHELASTIC_MAX_RESTARTS"] = "0";
  env.common["TORCHELASTIC_RUN_ID"] = plan.run_id;
  // Not "True": workers must host their own TCPStore on MASTER_PORT, mlenv-boot serves none.
  env.common["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  // DeepSpeed's launcher adds these (deepspeed/launcher/launch.py).
  env.common["CROSS_RANK"] = std::to_string(node_rank);
  env.common["CROSS_SIZE"] = nnodes;
  env.common["LOCAL_SIZE"] = nproc;
  prefer_user(env, user, "TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
  if (plan.nproc_per_node > 1) prefer_user(env, user, "OMP_NUM_THREADS", "1");

  for (int local = 0; local < plan.nproc_per_node; ++local) {
    std::string rank = std::to_string(node_rank * plan.nproc_per_node + local);
    env.per_worker.push_back(
        {{"RANK", rank}, {"LOCAL_RANK", std::to_string(local)}, {"ROLE_RANK", rank}});
  }
  for (const std::string& host : plan.hosts) {
    env.hostfile_lines.push_back(host + " slots=" + nproc);
  }
  env.deepspeed_env_lines = std::move(nccl_lines);
  std::sort(env.kept_from_user.begin(), env.kept_from_user.end());
  return env;
}

EnvMap worker_environment(const EnvMap& user, const NodeEnvironment& env, int local_rank) {
  EnvMap out = user;
  for (const auto& [name, value] : env.common) out[name] = value;
  for (const auto& [name, value] : env.per_worker.at(static_cast<size_t>(local_rank))) {
    out[name] = value;
  }
  return out;
}

void write_job_files(const BootConfig& config, const NodeEnvironment& env) {
  write_lines(config.hostfile, env.hostfile_lines, "hostfile");
  write_lines(config.deepspeed_env, env.deepspeed_env_lines, ".deepspeed_env");
}

namespace {

// POSIX sh single quotes take everything literally but a quote, which closes, escapes and reopens.
std::string shell_quote(const std::string& value) {
  std::string out = "'";
  for (char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::vector<std::string> shell_env_lines(const NodeEnvironment& env, const JobPlan& plan,
                                         int node_rank) {
  EnvMap exported;
  for (const auto& [name, value] : env.common) {
    if (name.starts_with("NCCL_")) exported[name] = value;
  }
  exported["MASTER_ADDR"] = plan.master_addr;
  exported["MASTER_PORT"] = std::to_string(plan.master_port);
  exported["WORLD_SIZE"] = std::to_string(plan.world_size());
  exported["NNODES"] = std::to_string(plan.nnodes);
  exported["NODE_RANK"] = std::to_string(node_rank);
  exported["NPROC_PER_NODE"] = std::to_string(plan.nproc_per_node);
  exported["MLENV_TRANSPORT"] = plan.transport;
  std::vector<std::string> lines;
  for (const auto& [name, value] : exported) {
    lines.push_back("export " + name + "=" + shell_quote(value));
  }
  return lines;
}

void write_shell_env(const std::string& path, const std::vector<std::string>& lines) {
  write_lines(path, lines, "shell environment");
}

Json environment_to_json(const NodeEnvironment& env) {
  Json workers = Json::array();
  for (const EnvMap& worker : env.per_worker) workers.push(to_json(worker));
  Json kept = Json::array();
  for (const std::string& name : env.kept_from_user) kept.push(name);
  Json out = Json::object();
  out.set("environment", to_json(env.common))
      .set("workers", std::move(workers))
      .set("kept_from_user", std::move(kept));
  return out;
}

}  // namespace boot
