#include "targets/local/field_rules.h"

#include <iterator>

namespace mlenv::target {
namespace {

// Node r takes the machine's GPUs [r·g, (r+1)·g) (local_container.h, node_gpus): every
// node must find its own, or two ranks share a device and NCCL refuses them ("Duplicate GPU
// detected", NVIDIA/nccl src/init.cc). The cluster's `gpus.per_node` is the machine's count.
void check_gpus(const ir::Env& env, Diagnostics& diagnostics) {
  const int machine = env.cluster.gpus.per_node;
  if (env.gpus <= 0 || env.nodes * env.gpus <= machine) return;
  diagnostics.report(Code::E0434, env.range,
                     "env `" + env.name + "`: " + std::to_string(env.nodes) + " nodes of " +
                         std::to_string(env.gpus) + " GPUs need " +
                         std::to_string(env.nodes * env.gpus) + ", and cluster `" +
                         env.cluster.name + "` says this machine has " + std::to_string(machine),
                     "lower `nodes` or `gpus`, or set the cluster's `gpus { per_node = N }` to "
                     "the machine's GPUs (`nvidia-smi -L`)");
}

class LocalRules : public check::PlatformRules {
 public:
  ir::Platform platform() const override { return ir::Platform::local; }

  // What runs an env with an image: podman, docker or the host.
  std::vector<check::PlatformField> fields() const override {
    static const check::PlatformField kFields[] = {{false, {"runtime"}}};
    return {std::begin(kFields), std::end(kFields)};
  }

  // Its nodes are processes (or host-network containers) of this machine, never pods.
  bool on_hosts() const override { return true; }

  // What processes on this machine have no place for; they need nothing more. debugpy listens
  // on 127.0.0.1:5678 of this machine, where the debugger is: no port-forward (issue 31 item 3).
  void check(const check::PlatformEnv& v, check::PlatformReport& report) const override {
    check::report_host_fields(v, report, true);
  }

  // Each env's nodes against the machine's GPUs, once the values are typed.
  void check_program(const ir::Program& program, Diagnostics& diagnostics) const override {
    for (const ir::Env& env : program.envs) {
      if (env.cluster.platform == ir::Platform::local) check_gpus(env, diagnostics);
    }
  }
};

}  // namespace

const check::PlatformRules& local_rules() {
  static const LocalRules rules;
  return rules;
}

}  // namespace mlenv::target
