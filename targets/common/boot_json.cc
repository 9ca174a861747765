#include "targets/common/boot_json.h"

#include <algorithm>

#include "targets/common/json_writer.h"
#include "targets/common/value.h"

namespace mlenv::target {

std::string boot_json(const EnvLayout& layout, const BootPlacement& placement) {
  const ir::Env& env = *layout.env;
  Value doc = Value::map();
  doc.set("format_version", 3);
  doc.set("job", layout.dir);
  Value& rank = doc.set("rank", Value::map());
  if (placement.rank_env.empty()) {
    rank.set("hostname_ordinal", true);
  } else {
    rank.set("env", placement.rank_env);
  }
  Value& rendezvous = doc.set("rendezvous", Value::map());
  rendezvous.set("host", placement.rendezvous_host);
  rendezvous.set("host_env", placement.rendezvous_host_env);
  rendezvous.set("port", env.rdzv_port);
  doc.set("nnodes", env.nodes);
  doc.set("nproc_per_node", env.nproc_per_node > 0 ? env.nproc_per_node : std::max(env.gpus, 1));
  doc.set("gpus_per_node", env.gpus);
  doc.set("master_port", env.master_port);
  bool rdma = env.transport == ir::Transport::rdma && env.cluster.network.rdma.has_value();
  doc.set("transport", !rdma ? "tcp" : env.transport_auto ? "auto" : "rdma");
  if (rdma) {
    const ir::Rdma& r = *env.cluster.network.rdma;
    Value& out = doc.set("rdma", Value::map());
    Value& rails = out.set("rails", Value::seq());
    for (const ir::Rail& rail : r.rails) {
      Value& item = rails.push(Value::map());
      item.set("device", rail.device);
      item.set("interface", rail.interface);
      item.set("link_layer",
               rail.link_layer == ir::LinkLayer::infiniband ? "infiniband" : "ethernet");
      item.set("network", rail.network);
      item.set("resource", rail.resource);
    }
    if (r.gid_index) out.set("gid_index", *r.gid_index);
    if (r.gdr_level) out.set("gdr_level", *r.gdr_level);
  }
  doc.set("tcp", Value::map())
      .set("interfaces", Value::strings(env.cluster.network.tcp_interfaces));
  Value& timeouts = doc.set("timeouts", Value::map());
  timeouts.set("discovery_s", 600);
  timeouts.set("rendezvous_s", 600);
  timeouts.set("heartbeat_s", 5);
  timeouts.set("grace_s", kStopGraceSeconds);
  doc.set("command", Value::strings(env.command));
  doc.set("launcher", env.launcher);
  // The compiler alone parses wrappers (`env X=1`, `uv run`, ...): mlenv-boot inserts the node
  // arguments after this many words instead of guessing them (runtime/BOOT_CONFIG.md).
  if (!env.launcher.empty()) doc.set("launcher_words", static_cast<int>(env.launcher_words));
  Value& services = doc.set("services", Value::seq());
  for (const ExposedService& s : layout.services) {
    Value& item = services.push(Value::map());
    item.set("name", s.name);
    item.set("argv", Value::strings(s.argv));
  }
  // The launcher's files go in the pod's own /run/mlenv (an emptyDir), never on the workspace
  // claim the cluster's envs share: DeepSpeed's runner reads the hostfile seconds after each
  // node writes it and asserts the node rank fits it (deepspeed/launcher/runner.py, `main`),
  // so another env's start rewriting it fails this one's ranks (issue 31 item 1).
  const bool files = !placement.on_host;
  const std::string run_dir = kShellEnvDir;
  doc.set("hostfile", !placement.hostfile.empty() ? placement.hostfile
                      : files                     ? run_dir + "/hostfile"
                                                  : std::string());
  doc.set("deepspeed_env", !placement.deepspeed_env.empty() ? placement.deepspeed_env
                           : files                          ? run_dir + "/.deepspeed_env"
                                                            : std::string());
  doc.set("shell_env", files ? std::string(kShellEnvDir) + "/env.sh" : std::string());
  // The rank-0 worker's debugpy (runtime/debugpy.h); only debug envs carry the key.
  if (env.debug) doc.set("debugpy_port", kDebugpyPort);
  doc.set("network_status",
          layout.rdma_attached ? std::string(kPodInfoDir) + "/network-status" : std::string());
  Value& check = doc.set("nccl_check", Value::map());
  const bool acceptance = env.kind == ir::EnvKind::acceptance;
  check.set("min_busbw_gbps", acceptance ? env.acceptance.min_busbw_gbps : 0);
  check.set("max_bytes", acceptance ? env.acceptance.max_bytes : std::int64_t{1} << 30);
  // Written only when set, so the boot.json of every other acceptance run is unchanged.
  if (acceptance && env.acceptance.diagnose) check.set("diagnose", true);
  return to_json_file(doc);
}

}  // namespace mlenv::target
