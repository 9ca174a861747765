#include "targets/kubernetes/field_rules.h"

#include <iterator>
#include <map>
#include <string>
#include <utility>

#include "compiler/check/value_paths.h"
#include "targets/kube/field_rules.h"

namespace mlenv::target {
namespace {

// Kueue admits only workloads that name a LocalQueue: without one, `priority` and the
// cluster's `topology` are ignored and the JobSet bypasses the quota.
void check_queue(const check::PlatformEnv& v, Diagnostics& diagnostics) {
  if (v.env.get("queue")) return;
  if (const check::Value* priority = v.env.get("priority")) {
    diagnostics.report(Code::E0430, priority->range,
                       "`priority` without a `queue`: Kueue never sees env `" + v.name + "`",
                       "add `queue = \"<the LocalQueue>\"`");
  }
  if (const check::Value* topology = v.cluster.get("topology")) {
    Diagnostic& d = diagnostics.report(
        Code::E0430, check::assigned_at(v.env, "cluster"),
        "env `" + v.name + "` has no `queue` on a cluster that uses Kueue",
        "without a queue Kueue ignores it: no quota, no `topology`; add `queue = \"...\"`");
    d.notes.push_back({"the cluster's Kueue topology", topology->range});
  }
}

class KubernetesRules : public check::PlatformRules {
 public:
  ir::Platform platform() const override { return ir::Platform::kubernetes; }

  // Kueue's `topology`, `queue` and `priority`; the pods' imagePullSecrets.
  std::vector<check::PlatformField> fields() const override {
    static const check::PlatformField kOwn[] = {
        {false, {"topology"}},
        {true, {"queue"}},
        {true, {"priority"}},
        {true, {"image", "pull_secret"}},
    };
    std::vector<check::PlatformField> fields = kube_fields();
    fields.insert(fields.end(), std::begin(kOwn), std::end(kOwn));
    return fields;
  }

  // Kube's needs; the registry the built image is pushed to; Kueue's queue.
  void check(const check::PlatformEnv& v, check::PlatformReport& report) const override {
    check_kube_needs(v, report);
    const check::Value* image = v.env.get("image");
    if (image && !check::get_path(image, {"registry"})) {
      report.missing("image.registry", check::declared_at(*image),
                     "the built image is pushed there and every node pulls it from there");
    }
    check_queue(v, report.diagnostics());
  }

  // E0430 across envs: in a namespace where some env waits in a queue, an env with no queue
  // bypasses the quota and the topology placement.
  void check_program(const ir::Program& program, Diagnostics& diagnostics) const override {
    // The first env with a queue on each cluster (by API server and namespace: one Kueue).
    std::map<std::pair<std::string, std::string>, const ir::Env*> queued;
    for (const ir::Env& env : program.envs) {
      if (env.cluster.platform == platform() && !env.queue.empty())
        queued.emplace(std::make_pair(env.cluster.api, env.cluster.namespace_name), &env);
    }
    for (const ir::Env& env : program.envs) {
      if (env.cluster.platform != platform() || !env.queue.empty()) continue;
      auto it = queued.find({env.cluster.api, env.cluster.namespace_name});
      if (it == queued.end()) continue;
      Diagnostic& d = diagnostics.report(
          Code::E0430, env.range,
          "env `" + env.name + "` has no `queue`, while env `" + it->second->name +
              "` of its namespace waits in Kueue's `" + it->second->queue + "`",
          "without a queue Kueue ignores it: no quota; add `queue = \"" + it->second->queue +
              "\"`");
      d.notes.push_back({"env `" + it->second->name + "` is queued here", it->second->range});
    }
  }
};

}  // namespace

const check::PlatformRules& kubernetes_rules() {
  static const KubernetesRules rules;
  return rules;
}

}  // namespace mlenv::target
