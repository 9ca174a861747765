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
  if (const check::Value* required = v.cluster.get("require_queue"); required && required->number) {
    Diagnostic& d = diagnostics.report(
        Code::E0430, check::assigned_at(v.env, "cluster"),
        "env `" + v.name + "` has no `queue` on a cluster that requires one",
        "every workload here waits in Kueue; add `queue = \"<the LocalQueue>\"`");
    d.notes.push_back({"the cluster requires a queue here", required->range});
    return;
  }
  if (const check::Value* topology = v.cluster.get("topology")) {
    Diagnostic& d = diagnostics.report(
        Code::E0430, check::assigned_at(v.env, "cluster"),
        "env `" + v.name + "` has no `queue` on a cluster that uses Kueue",
        "without a queue Kueue ignores it: no quota, no `topology`; add `queue = \"...\"`");
    d.notes.push_back({"the cluster's Kueue topology", topology->range});
  }
}

// Reported where the env chose its image: a stdlib or shared image leaves `registry` to each
// site, so the fix is an image of the user's own that extends it.
void report_no_registry(const check::PlatformEnv& v, const check::Value& image,
                        check::PlatformReport& report) {
  Diagnostic* d = report.missing("image.registry", check::assigned_at(v.env, "image"),
                                 "the built image is pushed there and every node pulls it from "
                                 "there");
  if (!d || image.decl.empty()) return;
  d->notes.push_back(
      {"declare an image of your own that `extends` it and sets `registry = "
       "\"<registry>/<path>\"`, and use that one here",
       {}});
  d->notes.push_back({"image `" + image.decl + "` is declared here", check::declared_at(image)});
}

// An env outside the quota its namespace's queued env waits in. Kueue leaves a workload
// without a queue name alone (its `manageJobsWithoutQueueName` is false by default): a run
// there takes the GPUs the quota was meant to share, an error; a dev env (a notebook), which
// platform teams run outside the quota on purpose, a warning. `require_queue` makes both errors.
void report_unqueued(const ir::Env& env, const ir::Env& queued, Diagnostics& diagnostics) {
  const bool dev = env.kind == ir::EnvKind::dev;
  Diagnostic& d = diagnostics.report(
      dev ? Code::W0408 : Code::E0430, env.range,
      std::string(dev ? "dev env `" : "env `") + env.name + "` has no `queue`, while env `" +
          queued.name + "` of its namespace waits in Kueue's `" + queued.queue + "`",
      "without a queue Kueue ignores it: it runs outside the quota; add `queue = \"" +
          queued.queue + "\"`" + (dev ? " if it should not" : ""));
  d.notes.push_back({"env `" + queued.name + "` is queued here", queued.range});
  if (dev) {
    d.notes.push_back({"a cluster with `final require_queue = true` makes this an error", {}});
  }
}

class KubernetesRules : public check::PlatformRules {
 public:
  ir::Platform platform() const override { return ir::Platform::kubernetes; }

  // Kueue's `topology`, `queue` and `priority`; the pods' imagePullSecrets.
  std::vector<check::PlatformField> fields() const override {
    static const check::PlatformField kOwn[] = {
        {false, {"topology"}}, {false, {"require_queue"}},       {true, {"queue"}},
        {true, {"priority"}},  {true, {"image", "pull_secret"}},
    };
    std::vector<check::PlatformField> fields = kube_fields();
    fields.insert(fields.end(), std::begin(kOwn), std::end(kOwn));
    return fields;
  }

  // Kube's needs; the registry the built image is pushed to; Kueue's queue.
  void check(const check::PlatformEnv& v, check::PlatformReport& report) const override {
    check_kube_needs(v, report);
    const check::Value* image = v.env.get("image");
    if (image && !check::get_path(image, {"registry"})) report_no_registry(v, *image, report);
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
      // A cluster that requires a queue had each env without one reported by check().
      if (env.cluster.platform != platform() || !env.queue.empty() || env.cluster.require_queue)
        continue;
      auto it = queued.find({env.cluster.api, env.cluster.namespace_name});
      if (it != queued.end()) report_unqueued(env, *it->second, diagnostics);
    }
  }
};

}  // namespace

const check::PlatformRules& kubernetes_rules() {
  static const KubernetesRules rules;
  return rules;
}

}  // namespace mlenv::target
