#include "boot.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "boot_status.h"
#include "config.h"
#include "control.h"
#include "debugpy.h"
#include "environment.h"
#include "exit_code.h"
#include "identity.h"
#include "launch.h"
#include "log.h"
#include "nccl_check.h"
#include "plan.h"
#include "probe.h"
#include "rails.h"
#include "rendezvous.h"
#include "supervisor.h"
#include "util.h"

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

// What every phase reads: the flags, boot.json, mlenv-boot's own environment and when it began.
struct BootContext {
  const Options& options;
  BootConfig config;
  EnvMap user;
  Clock::time_point start;
};

// The outcome of the rendezvous on this node, whatever its role. The connections stay plain
// through the self-test, whose steps use them, and become the control link afterwards.
struct Agreement {
  JobPlan plan;
  std::string reached_interface;
  NodeLinks links;
};

// The control channel over the rendezvous connections, for the supervisor.
std::unique_ptr<ControlLink> control_link(Agreement& agreement, const Identity& identity,
                                          double heartbeat_s) {
  if (identity.nnodes == 1) return make_solo_link();
  if (identity.node_rank == 0) {
    return make_coordinator_link(std::move(agreement.links.members), heartbeat_s);
  }
  return make_member_link(std::move(agreement.links.rank0), heartbeat_s);
}

// The cluster model of a simulated self-test (tests only), or "" for NCCL.
std::string simulate_model(const EnvMap& user) {
  std::optional<std::string> model = lookup(user, kSimulateVariable);
  return model ? *model : "";
}

// This node's socket interface and environment, derived from the shared plan.
struct LocalEnvironment {
  std::string interface;
  NodeEnvironment env;
};

// Phase 1: which node this is; the source of the rank is always logged.
Identity establish_identity(const BootContext& context) {
  Identity identity =
      resolve_identity({context.options.node_rank, context.options.nnodes, context.config.nnodes,
                        context.config.rank, context.user, local_hostname()});
  log_info("node " + std::to_string(identity.node_rank) + " of " + std::to_string(identity.nnodes) +
           " (rank from " + identity.rank_source + ", nnodes from " + identity.nnodes_source + ")");
  return identity;
}

// A build without NCCL cannot run --nccl-check; an acceptance run still leaves a results
// document saying so, so `mlenvc results` shows the reason rather than nothing.
// A self-test that cannot start still leaves rank 0's `error` results document, so `mlenvc
// results` shows why rather than nothing; then fails with `code` and `why`.
[[noreturn]] void fail_before_self_test(const BootContext& context, const Identity& identity,
                                        const std::string& transport, int code,
                                        const std::string& why) {
  if (context.options.nccl_check && identity.node_rank == 0 && !context.options.dry_run) {
    NcclCheckRequest request;
    request.job = context.config.job;
    request.nnodes = identity.nnodes;
    request.nproc_per_node = context.config.nproc_per_node;
    request.transport = transport;
    request.min_busbw_gbps = context.config.nccl_min_busbw_gbps;
    CheckTimes times{utc_now(), utc_now(), 0};
    publish_results(results_to_json(request, {}, {"error", why}, nccl_version_text(), times),
                    context.options.results_path);
  }
  throw BootError(code, why);
}

void refuse_check_without_nccl(const BootContext& context, const Identity& identity) {
  if (!context.options.nccl_check || nccl_check_built() || !simulate_model(context.user).empty())
    return;
  fail_before_self_test(context, identity, context.config.transport, kExitConfigError,
                        "--nccl-check: this mlenv-boot was built without NCCL (CUDA and NCCL "
                        "were not found when it was compiled)");
}

// Rank 0's host as boot.json gives it: the name the target computed, or the variable the job's
// script set (Slurm's MLENV_RDZV_HOST, from rank 0's NodeAddr).
std::string configured_rank0_host(const BootContext& context) {
  const Rendezvous& rendezvous = context.config.rendezvous;
  if (rendezvous.host_env.empty()) return rendezvous.host;
  std::optional<std::string> host = lookup(context.user, rendezvous.host_env);
  if (!host || trim(*host).empty()) {
    throw BootError(kExitConfigError, "no rendezvous host: " + rendezvous.host_env +
                                          " (boot.json `rendezvous.host_env`) is not set");
  }
  return std::string(trim(*host));
}

// Rank 0's rendezvous endpoint: --rdzv, else boot.json's `rendezvous`.
Endpoint rendezvous_endpoint(const BootContext& context) {
  if (!context.options.rdzv) {
    return {configured_rank0_host(context), context.config.rendezvous.port};
  }
  std::optional<Endpoint> rank0 = parse_endpoint(*context.options.rdzv);
  if (!rank0) throw BootError(kExitConfigError, "--rdzv takes HOST:PORT");
  if (rank0->port == context.config.master_port) {
    throw BootError(kExitConfigError, "the rendezvous port must differ from master_port " +
                                          std::to_string(context.config.master_port));
  }
  return *rank0;
}

// Phase 3: maps each rail to the HCA attached on this node, then probes those HCAs.
ProbeResult probe_this_node(const BootContext& context) {
  const BootConfig& config = context.config;
  ProbeOptions probe_options;
  probe_options.roots = context.options.roots;
  probe_options.min_memlock_bytes = config.min_memlock_bytes;
  probe_options.rails_configured = !config.rails.empty();
  std::optional<std::string> network_status;
  if (!config.network_status.empty()) network_status = read_file(config.network_status);
  for (const RailMapping& mapping :
       map_rails(config.rails, context.options.roots.sysfs, context.user, network_status)) {
    log_info(describe_mapping(mapping));
    if (mapping.device.empty()) {
      probe_options.unmapped_why.push_back(mapping.detail);
    } else if (std::find(probe_options.devices.begin(), probe_options.devices.end(),
                         mapping.device) == probe_options.devices.end()) {
      probe_options.devices.push_back(mapping.device);  // two rails may share one HCA
    }
  }
  ProbeResult probe = probe_node(probe_options);
  for (const std::string& warning : probe.warnings) log_warning(warning);
  log_info(std::string("probe: RDMA ") + (probe.rdma_usable ? "usable" : "not usable") + ": " +
           probe.rdma_detail + "; " + std::to_string(probe.gpu_count) + " GPUs");
  return probe;
}

// The run's secret, which only the job's nodes hold: the platform sets MLENV_JOB_TOKEN (a Secret
// apply creates on Kubernetes and OpenShift, a random value the batch script makes on Slurm).
// boot.json is committed and lies on shared disks, so nothing derived from it may admit a node.
std::string job_token(const BootContext& context) {
  std::optional<std::string> token = lookup(context.user, "MLENV_JOB_TOKEN");
  if (!token || token->empty()) {
    throw BootError(kExitConfigError,
                    "MLENV_JOB_TOKEN is not set: a job of several nodes admits only nodes "
                    "holding the run's secret (mlenvc apply creates it; by hand, give every "
                    "node the same random value)");
  }
  return *token;
}

JoinRequest join_request(const BootContext& context, const Identity& identity,
                         const Endpoint& rank0, const ProbeResult& probe) {
  JoinRequest request;
  request.job = context.config.job;
  request.nnodes = identity.nnodes;
  request.nproc_per_node = context.config.nproc_per_node;
  request.report.rank = identity.node_rank;
  // Rank 0 is known by its rendezvous host; every other node by the address it reaches rank 0
  // from (join_rendezvous fills it in), whatever named its pod or host.
  request.report.host = identity.node_rank == 0 ? rank0.host : "";
  request.report.rdma_usable = probe.rdma_usable;
  request.report.rdma_detail = probe.rdma_detail;
  request.report.gpu_count = probe.gpu_count;
  return request;
}

// Phase 5: this node's environment from the shared plan and its own probe.
LocalEnvironment local_environment(const BootContext& context, const Identity& identity,
                                   const ProbeResult& probe, const JobPlan& plan,
                                   const std::string& reached) {
  std::string interface =
      choose_socket_interface(context.config.tcp_interfaces, reached, has_interface);
  return {interface, build_environment(context.config, plan, identity.node_rank, probe, interface,
                                       context.user, nccl_needs_gid_index())};
}

// Exports the NCCL variables into mlenv-boot itself, for the self-test it runs in-process.
void apply_nccl_environment(const NodeEnvironment& env) {
  for (const auto& [name, value] : env.common) {
    if (name.starts_with("NCCL_")) ::setenv(name.c_str(), value.c_str(), 1);
  }
}

// Phase 4 on rank 0 of several nodes: gather every report, decide, send the plan.
Agreement coordinate(const BootContext& context, const Identity& identity, const ProbeResult& probe,
                     const JoinRequest& request, int port, double rendezvous_s) {
  Agreement agreement;
  Coordinator coordinator(request, port);
  log_info("rendezvous: waiting for " + std::to_string(identity.nnodes - 1) + " nodes on port " +
           std::to_string(port));
  // Until the first node comes, rank 0 waits rendezvous_s from its start; each node that joins
  // gives the rest rendezvous_s more (cold starts: nodes pulling a large image start minutes
  // apart).
  std::vector<NodeReport> reports = coordinator.gather(
      after(context.start, rendezvous_s),
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(rendezvous_s)));
  agreement.plan = decide_plan(context.config, reports, context.config.job);
  agreement.reached_interface = coordinator.reached_interface();
  // The NCCL id embeds rank 0's bootstrap address, so its NCCL variables must be set first.
  if (context.options.nccl_check && !context.options.dry_run &&
      agreement.plan.transport_error.empty() && simulate_model(context.user).empty()) {
    apply_nccl_environment(
        local_environment(context, identity, probe, agreement.plan, agreement.reached_interface)
            .env);
    agreement.plan.nccl_unique_id = make_nccl_unique_id();
  }
  coordinator.send_plan(agreement.plan);
  agreement.links.members = coordinator.take_members();
  return agreement;
}

// Phase 4 on any other node: join rank 0 and take its plan.
Agreement join(const BootContext& context, const Identity& identity, const JoinRequest& request,
               const Endpoint& rank0, double discovery_s, double rendezvous_s) {
  Membership membership =
      join_rendezvous(rank0, request, after(context.start, discovery_s), rendezvous_s);
  if (std::optional<std::string> why =
          plan_mismatch(context.config, identity.nnodes, membership.plan)) {
    throw BootError(kExitConfigError, "refusing rank 0's plan: " + *why);
  }
  Agreement agreement;
  agreement.plan = membership.plan;
  agreement.reached_interface = interface_of_address(membership.local_address);
  agreement.links.rank0 = std::move(membership.link);
  return agreement;
}

// Phase 4: one plan shared by every node.
Agreement agree_on_plan(const BootContext& context, const Identity& identity,
                        const ProbeResult& probe) {
  Endpoint rank0 = rendezvous_endpoint(context);
  double discovery_s = context.options.timeout_s.value_or(context.config.discovery_s);
  double rendezvous_s = context.options.timeout_s.value_or(context.config.rendezvous_s);
  JoinRequest request = join_request(context, identity, rank0, probe);
  if (identity.nnodes == 1) {
    Agreement agreement;
    agreement.plan = decide_plan(context.config, {request.report}, context.config.job);
    return agreement;
  }
  request.token = job_token(context);
  if (identity.node_rank == 0) {
    return coordinate(context, identity, probe, request, rank0.port, rendezvous_s);
  }
  return join(context, identity, request, rank0, discovery_s, rendezvous_s);
}

// "rdma" never degrades: every node fails with the same line; "auto" says that it fell back.
void enforce_transport(const BootContext& context, const Identity& identity, const JobPlan& plan) {
  if (!plan.transport_error.empty()) {
    fail_before_self_test(context, identity, plan.transport, kExitTransport, plan.transport_error);
  }
  bool fell_back = context.config.transport == "auto" && plan.transport != "rdma";
  (fell_back ? log_warning
             : log_info)("transport " + plan.transport + ": " + plan.transport_reason);
}

// What this node would start: each child's name and exact argv (a launcher's inserted flags).
Json launch_to_json(const LaunchSpec& spec) {
  Json out = Json::array();
  for (const std::vector<ChildSpec>* children : {&spec.workers, &spec.services}) {
    for (const ChildSpec& child : *children) {
      Json argv = Json::array();
      for (const std::string& arg : child.argv) argv.push(arg);
      Json entry = Json::object();
      entry.set("name", child.name).set("argv", std::move(argv));
      out.push(std::move(entry));
    }
  }
  return out;
}

Json dry_run_plan(const Identity& identity, const JobPlan& plan, const LocalEnvironment& local,
                  const std::vector<std::string>& command, const LaunchSpec& spec,
                  const ProbeResult& probe) {
  const NodeEnvironment& env = local.env;
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
      .set("socket_interface", local.interface);
  Json environment = environment_to_json(env);
  for (const auto& [key, value] : environment.as_object()) out.set(key, value);
  out.set("hostfile", std::move(hostfile))
      .set("deepspeed_env", std::move(deepspeed_env))
      .set("command", std::move(strings))
      .set("launch", launch_to_json(spec))
      .set("probe", probe_to_json(probe));
  return out;
}

void print_stdout(const std::string& text) {
  ssize_t ignored = ::write(STDOUT_FILENO, text.data(), text.size());
  (void)ignored;
}

// Phase 5's files: the DeepSpeed hostfile, .deepspeed_env, the login shells' variables and the
// status file `mlenvc status` reads.
void write_node_files(const BootConfig& config, const JobPlan& plan, const Identity& identity,
                      const NodeEnvironment& env) {
  write_job_files(config, env);
  if (!config.shell_env.empty()) {
    write_shell_env(config.shell_env, shell_env_lines(env, plan, identity.node_rank));
  }
  write_status_file(status_file_path(config.shell_env),
                    status_document(config.job, identity.node_rank, plan));
}

// Phase 6: the NCCL all-reduce sweep across every GPU of every node; its exit code.
int run_self_test(const BootContext& context, const Identity& identity, const JobPlan& plan,
                  const NodeEnvironment& env, NodeLinks& links) {
  apply_nccl_environment(env);
  NcclCheckRequest check;
  check.job = context.config.job;
  check.nnodes = plan.nnodes;
  check.nproc_per_node = plan.nproc_per_node;
  check.node_rank = identity.node_rank;
  check.unique_id_hex = plan.nccl_unique_id;
  check.transport = plan.transport;
  check.max_bytes = context.config.nccl_max_bytes;
  check.min_busbw_gbps = context.config.nccl_min_busbw_gbps;
  check.timeout_s = context.config.nccl_timeout_s;
  check.results_path = context.options.results_path;
  check.diagnose = context.config.nccl_diagnose;
  check.step_timeout_s = context.config.nccl_step_timeout_s;
  check.step_bytes = std::min<std::uint64_t>(context.config.nccl_max_bytes, check.step_bytes);
  check.simulate_model = simulate_model(context.user);
  check.hosts = plan.hosts;
  for (const auto& [name, value] : env.common) {
    if (name.starts_with("NCCL_")) check.nccl_env[name] = value;
  }
  return run_nccl_check(check, links);
}

// Phase 7a: the workers or the launcher, and rank 0's services.
LaunchSpec launch_spec(const BootContext& context, const Identity& identity, const JobPlan& plan,
                       const NodeEnvironment& env) {
  // `launcher` describes boot.json's command; a command after "--" is a per-worker program.
  bool own_command = context.options.command.empty();
  const std::vector<std::string>& command =
      own_command ? context.config.command : context.options.command;
  std::string launcher = own_command ? context.config.launcher : "";
  return plan_launch(context.config, command, launcher, plan, identity.node_rank, context.user,
                     env);
}

// Phase 7b: start them and supervise them to the end.
int launch(const BootContext& context, const Identity& identity, const LaunchSpec& spec,
           ControlLink& link) {
  if (identity.node_rank != 0 && !context.config.services.empty()) {
    log_info("services run on node 0 only");
  }
  if (spec.workers.empty() && spec.services.empty() && identity.nnodes == 1) {
    log_info("nothing to launch: boot.json has no command and no services");
    return kExitOk;
  }
  int code = supervise(spec, link);
  log_info("exiting with code " + std::to_string(code));
  return code;
}

}  // namespace

int run_boot(const Options& options) {
  BootContext context{options, {}, read_environ(), Clock::now()};
  install_signal_handlers();
  context.config = load_config(options.config_path);
  Identity identity = establish_identity(context);
  refuse_check_without_nccl(context, identity);
  ProbeResult probe = probe_this_node(context);
  Agreement agreement = agree_on_plan(context, identity, probe);
  const JobPlan& plan = agreement.plan;
  enforce_transport(context, identity, plan);
  LocalEnvironment local =
      local_environment(context, identity, probe, plan, agreement.reached_interface);
  for (const std::string& name : local.env.kept_from_user) {
    log_info("keeping the user's " + name);
  }

  LaunchSpec spec = launch_spec(context, identity, plan, local.env);
  if (options.dry_run) {
    const std::vector<std::string>& command =
        options.command.empty() ? context.config.command : options.command;
    print_stdout(dry_run_plan(identity, plan, local, command, spec, probe).pretty());
    return kExitOk;
  }
  write_node_files(context.config, plan, identity, local.env);
  // Global rank 0 is on node 0: only there can a worker take the debugger's port.
  if (context.config.debugpy_port > 0 && identity.node_rank == 0) {
    std::string hook = write_debugpy_hook();
    for (ChildSpec& worker : spec.workers) {
      if (!hook.empty()) add_debugpy_hook(worker.env, hook, context.config.debugpy_port);
    }
  }
  Json status = status_document(context.config.job, identity.node_rank, plan);
  spec.service_exited = [&](const std::string& name, int code) {
    add_exited_service(status, name, code);
    write_status_file(status_file_path(context.config.shell_env), status);
  };

  if (options.nccl_check) {
    // Every node ends with rank 0's verdict, which the steps' end carries to the members.
    int code = run_self_test(context, identity, plan, local.env, agreement.links);
    // An acceptance run has no command: the self-test's result is the run's result.
    bool acceptance = options.command.empty() && context.config.command.empty();
    if (code != kExitOk || acceptance) return code;
  }
  std::unique_ptr<ControlLink> link = control_link(agreement, identity, context.config.heartbeat_s);
  return launch(context, identity, spec, *link);
}

}  // namespace boot
