#include "targets/kubernetes/jobset.h"

namespace mlenv::target::kube {

std::string jobset_rank0_host(const EnvLayout& layout) {
  // `<jobset>-<replicated job>-<job index>-<pod index>.<subdomain>` (kubernetes-sigs/jobset,
  // site/static/examples/simple/jobset-with-network.yaml), in the env's namespace.
  return layout.workload + "-" + kJobSetReplicatedJob + "-0-0." + layout.headless_service + "." +
         layout.namespace_name + ".svc";
}

Object jobset(const EnvLayout& layout, const PodExtras& extras,
              const std::map<std::string, std::string>& labels) {
  const ir::Env& env = *layout.env;
  Object o = make_object("jobset.x-k8s.io/v1alpha2", "JobSet", layout.workload,
                         layout.namespace_name, labels);
  o.order = ApplyOrder::Workload;
  Value& spec = o.body.set("spec", Value::map());
  // Pods resolve as `<jobset>-node-0-<index>.<subdomain>`; the env's headless Service is the
  // subdomain (the JobSet controller creates none when it exists), published before readiness.
  Value& network = spec.set("network", Value::map());
  network.set("enableDNSHostnames", true);
  network.set("subdomain", layout.headless_service);
  network.set("publishNotReadyAddresses", true);
  // Any failed pod fails the Job (backoffLimit 0) and the JobSet restarts every node together,
  // `restarts` times; mlenv-boot's config and transport errors (the Job's PodFailurePolicy)
  // fail it at once.
  Value& failure = spec.set("failurePolicy", Value::map());
  failure.set("maxRestarts", env.restarts);
  Value& rule = failure.set("rules", Value::seq()).push(Value::map());
  // The JobSet webhook accepts only ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ (no `-`;
  // kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go, ruleNameFmt, since v0.6.0).
  rule.set("name", "mlenv_boot_fatal");
  rule.set("action", "FailJobSet");
  rule.set("onJobFailureReasons", Value::strings({"PodFailurePolicy"}));
  spec.set("successPolicy", Value::map()).set("operator", "All");
  Value& replicated = spec.set("replicatedJobs", Value::seq()).push(Value::map());
  replicated.set("name", kJobSetReplicatedJob);
  replicated.set("replicas", 1);
  replicated.set("template", Value::map())
      .set("spec", indexed_job_spec(layout, extras, 0, std::nullopt));
  if (env.ttl_seconds) spec.set("ttlSecondsAfterFinished", *env.ttl_seconds);
  return o;
}

}  // namespace mlenv::target::kube
