#include "boot.h"

#include <unistd.h>

#include <cstdlib>

#include "config.h"
#include "control.h"
#include "environment.h"
#include "exit_code.h"
#include "identity.h"
#include "log.h"
#include "nccl_check.h"
#include "plan.h"
#include "probe.h"
#include "rendezvous.h"
#include "supervisor.h"

namespace boot {
namespace {

std::string local_hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

Clock::time_point after(Clock::time_point start, double seconds) {
  return time_after(start, seconds);  // saturating: a huge timeout must not wrap to the past
}

// The outcome of the rendezvous on this node, whatever its role.
struct Agreement {
  JobPlan plan;
  std::string reached_interface;
  std::unique_ptr<ControlLink> link;
};

// Exports the NCCL variables into mlenv-boot itself, for the self-test it runs in-process.
void apply_nccl_environment(const NodeEnvironment& env) {
  for (const auto& [name, value] : env.common) {
    if (name.starts_with("NCCL_")) ::setenv(name.c_str(), value.c_str(), 1);
  }
}

EnvMap nccl_subset(const EnvMap& env) {
  EnvMap out;
  for (const auto& [name, value] : env) {
    if (name.starts_with("NCCL_")) out[name] = value;
  }
  return out;
}

Json dry_run_plan(const Identity& identity, const JobPlan& plan, const std::string& interface,
                  const NodeEnvironment& env, const std::vector<std::string>& command,
                  const ProbeResult& probe) {
  Json strings = Json::array();
  for (const std::string& arg : command) strings.push(arg);
  Json hostfile = Json::array();
  for (const std::string& line : env.hostfile_lines) hostfile.push(line);
  Json deepspeed_env = Json::array();
  for (const std::string& line : env.deepspeed_env_lines) deepspeed_env.push(line);
  Json out = Json::object();
  out.set("node_rank", identity.node_rank)
      .set("rank_source", identity.rank_source)
      .set("nnodes", plan.nnodes)
      .set("nproc_per_node", plan.nproc_per_node)
      .set("world_size", plan.world_size())
      .set("transport", plan.transport)
      .set("transport_reason", plan.transport_reason)
      .set("master_addr", plan.master_addr)
      .set("master_port", plan.master_port)
      .set("socket_interface", interface);
  Json environment = environment_to_json(env);
  for (const auto& [key, value] : environment.as_object()) out.set(key, value);
  out.set("hostfile", std::move(hostfile))
      .set("deepspeed_env", std::move(deepspeed_env))
      .set("command", std::move(strings))
      .set("probe", probe_to_json(probe));
  return out;
}

}  // namespace

int run_boot(const Options& options) {
  auto start = Clock::now();
  install_signal_handlers();
  BootConfig config = load_config(options.config_path);
  if (options.nccl_check && !nccl_check_built()) make_nccl_unique_id();  // throws: no NCCL

  EnvMap user = read_environ();
  Identity identity =
      resolve_identity({options.node_rank, options.nnodes, config.nnodes, user, local_hostname()});
  log_info("node " + std::to_string(identity.node_rank) + " of " + std::to_string(identity.nnodes) +
           " (rank from " + identity.rank_source + ", nnodes from " + identity.nnodes_source + ")");

  Endpoint rank0{config.peer_host(0), config.rdzv_port};
  if (options.rdzv) {
    std::optional<Endpoint> endpoint = parse_endpoint(*options.rdzv);
    if (!endpoint) throw BootError(kExitConfigError, "--rdzv takes HOST:PORT");
    rank0 = *endpoint;
  }
  if (rank0.port == config.master_port) {
    throw BootError(kExitConfigError, "the rendezvous port must differ from master_port " +
                                          std::to_string(config.master_port));
  }
  double discovery_s = options.timeout_s.value_or(config.discovery_s);
  double rendezvous_s = options.timeout_s.value_or(config.rendezvous_s);

  ProbeOptions probe_options;
  probe_options.roots = options.roots;
  for (const RdmaRail& rail : config.rails) probe_options.devices.push_back(rail.device);
  probe_options.min_memlock_bytes = config.min_memlock_bytes;
  ProbeResult probe = probe_node(probe_options);
  for (const std::string& warning : probe.warnings) log_warning(warning);
  log_info(std::string("probe: RDMA ") + (probe.rdma_usable ? "usable" : "not usable") + ": " +
           probe.rdma_detail + "; " + std::to_string(probe.gpu_count) + " GPUs");

  std::optional<std::string> secret = lookup(user, "MLENV_JOB_TOKEN");
  JoinRequest request;
  request.job = config.job;
  request.token = secret ? *secret : fnv1a_hex(config.job + "\n" + config.digest);
  request.nnodes = identity.nnodes;
  request.nproc_per_node = config.nproc_per_node;
  request.report.rank = identity.node_rank;
  // With --rdzv peers are known by the address they reach rank 0 from; rank 0 by that endpoint.
  request.report.host = !options.rdzv             ? config.peer_host(identity.node_rank)
                        : identity.node_rank == 0 ? rank0.host
                                                  : "";
  request.report.rdma_usable = probe.rdma_usable;
  request.report.rdma_detail = probe.rdma_detail;
  request.report.gpu_count = probe.gpu_count;

  // Rank 0 needs its environment before the plan leaves: the self-test's NCCL id depends on it.
  auto local_environment = [&](const JobPlan& plan, const std::string& reached) {
    std::string interface = choose_socket_interface(config.tcp_interfaces, reached, has_interface);
    return std::make_pair(interface, build_environment(config, plan, identity.node_rank, probe,
                                                       interface, user, nccl_needs_gid_index()));
  };
  Agreement agreement;
  if (identity.nnodes == 1) {
    agreement.plan = decide_plan(config, {request.report}, config.job);
    agreement.link = make_solo_link();
  } else if (identity.node_rank == 0) {
    Coordinator coordinator(request, rank0.port);
    log_info("rendezvous: waiting for " + std::to_string(identity.nnodes - 1) + " nodes on port " +
             std::to_string(rank0.port));
    std::vector<NodeReport> reports = coordinator.gather(after(start, rendezvous_s));
    agreement.plan = decide_plan(config, reports, config.job);
    agreement.reached_interface = coordinator.reached_interface();
    if (options.nccl_check && !options.dry_run) {
      apply_nccl_environment(local_environment(agreement.plan, agreement.reached_interface).second);
      agreement.plan.nccl_unique_id = make_nccl_unique_id();
    }
    coordinator.send_plan(agreement.plan);
    agreement.link = make_coordinator_link(coordinator.take_members(), config.heartbeat_s);
  } else {
    Membership membership =
        join_rendezvous(rank0, request, after(start, discovery_s), rendezvous_s);
    if (membership.plan.nnodes != identity.nnodes) {
      throw BootError(kExitConfigError,
                      "rank 0 planned for " + std::to_string(membership.plan.nnodes) + " nodes");
    }
    agreement.plan = membership.plan;
    agreement.reached_interface = interface_of_address(membership.local_address);
    agreement.link = make_member_link(std::move(membership.link), config.heartbeat_s);
  }
  const JobPlan& plan = agreement.plan;
  auto [interface, env] = local_environment(plan, agreement.reached_interface);
  (plan.transport == "rdma" || config.transport != "rdma" ? log_info : log_warning)(
      "transport " + plan.transport + ": " + plan.transport_reason);
  for (const std::string& name : env.kept_from_user) log_info("keeping the user's " + name);

  std::vector<std::string> command = options.command.empty() ? config.command : options.command;
  if (options.dry_run) {
    std::string text = dry_run_plan(identity, plan, interface, env, command, probe).pretty();
    ssize_t ignored = ::write(STDOUT_FILENO, text.data(), text.size());
    (void)ignored;
    return kExitOk;
  }
  write_job_files(config, env);

  if (options.nccl_check) {
    apply_nccl_environment(env);
    NcclCheckRequest check;
    check.nnodes = plan.nnodes;
    check.nproc_per_node = plan.nproc_per_node;
    check.node_rank = identity.node_rank;
    check.unique_id_hex = plan.nccl_unique_id;
    check.transport = plan.transport;
    check.max_bytes = config.nccl_max_bytes;
    check.min_busbw_gbps = config.nccl_min_busbw_gbps;
    check.timeout_s = config.nccl_timeout_s;
    check.results_path = options.results_path;
    check.nccl_env = nccl_subset(env.common);
    int code = run_nccl_check(check);
    if (code != kExitOk) {
      agreement.link->report_failure(code, "the NCCL self-test failed");
      return code;
    }
  }

  LaunchSpec launch;
  launch.grace_s = config.grace_s;
  if (!command.empty()) {
    for (int local = 0; local < plan.nproc_per_node; ++local) {
      launch.workers.push_back(
          {"worker " + std::to_string(local), command, worker_environment(user, env, local)});
    }
  }
  EnvMap service_env = user;
  for (const auto& [name, value] : env.common) service_env[name] = value;
  for (const Service& service : config.services) {
    launch.services.push_back({"service " + service.name, service.argv, service_env});
  }
  if (launch.workers.empty() && launch.services.empty()) {
    log_info("nothing to launch: boot.json has no command and no services");
    return kExitOk;
  }
  int code = supervise(launch, *agreement.link);
  log_info("exiting with code " + std::to_string(code));
  return code;
}

}  // namespace boot
