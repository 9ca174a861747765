#include "targets/kubernetes/kubernetes_provider.h"

#include <ostream>
#include <string_view>

#include "targets/common/plan_json.h"
#include "targets/kube/day2/cluster_json.h"
#include "targets/kube/day2/session.h"
#include "targets/kube/kube_provider.h"
#include "targets/kubernetes/admission.h"
#include "targets/kubernetes/field_rules.h"
#include "targets/kubernetes/jobset.h"
#include "targets/kubernetes/kubernetes_target.h"

namespace mlenv::target {
namespace {

// The flattened path (compiler/plan/yaml_fields.h) of a workload's Kueue queue label.
constexpr const char* kQueueLabelPath = R"(metadata.labels["kueue.x-k8s.io/queue-name"])";
// And of its workload priority class label.
constexpr const char* kPriorityLabelPath = R"(metadata.labels["kueue.x-k8s.io/priority-class"])";

// True when `path` is `field` or lies under it.
bool under(std::string_view path, std::string_view field) {
  return path.starts_with(field) &&
         (path.size() == field.size() || path[field.size()] == '.' || path[field.size()] == '[');
}

// The arguments of `get workloads.kueue.x-k8s.io` that print one line for Kueue's Workload of
// the workload `name` in `namespace_` (the Workload it owns): its queue, then the status,
// reason and message of its QuotaReserved condition, tab-separated (parse_queued). Kueue keeps
// that condition False, with its reason, while the workload waits in its queue and the job
// stays suspended (kubernetes-sigs/kueue apis/kueue/v1beta1 workload_types.go).
std::vector<std::string> kueue_workload_args(const std::string& namespace_,
                                             const std::string& name) {
  const std::string reserved = ".status.conditions[?(@.type==\"QuotaReserved\")]";
  return {"get",
          "workloads.kueue.x-k8s.io",
          "-n",
          namespace_,
          "-o",
          "jsonpath={range .items[?(@.metadata.ownerReferences[0].name==\"" + name +
              "\")]}{.spec.queueName}{\"\\t\"}{" + reserved + ".status}{\"\\t\"}{" + reserved +
              ".reason}{\"\\t\"}{" + reserved + ".message}{\"\\n\"}{end}"};
}

class KubernetesProvider : public KubeProvider {
 public:
  ir::Platform platform() const override { return ir::Platform::kubernetes; }
  const target::Target& target() const override { return target_; }
  const target::kube::RunWorkload& run() const override { return target::kube::kJobSetRun; }
  const check::PlatformRules& rules() const override { return kubernetes_rules(); }
  openapi::AdmissionRules admission_rules() const override {
    return &target::kubernetes::admission_issues;
  }

  // An env's queue and priority are Kueue's (`queue`, `priority`): digested under the key they
  // always had, on every platform.
  void add_own_digest_fields(const ir::Env& env, target::DigestText& text) const override {
    text.add("kueue", {env.queue, env.priority});
  }

  // A StatefulSet with a Kueue queue is one pod group Kueue admitted as a whole. Its webhook
  // (kubernetes-sigs/kueue pkg/controller/jobs/statefulset/statefulset_webhook.go,
  // ValidateUpdate) refuses a changed queue label and any change of `spec.replicas` between
  // two non-zero counts ("Allow only scale down to zero and scale up from zero"), and the pod
  // group's requests, ports and placement were admitted with it: apply deletes and creates
  // the StatefulSet, which Kueue admits again.
  //
  // A run's (a JobSet's) queue and priority are Kueue's to read at admission: its job
  // framework webhook refuses a changed queue-name label while the job is not suspended
  // (kubernetes-sigs/kueue pkg/controller/jobframework/validation.go,
  // validateUpdateForQueueName), and the priority is the admitted Workload's
  // (validateUpdateForWorkloadPriorityClassName): the run is deleted and queued again.
  std::string replace_reason(std::string_view kind, std::string_view path,
                             const std::map<std::string, std::string>& object) const override {
    if (is_run_kind(kind) && under(path, kQueueLabelPath))
      return "Kueue's webhook refuses a changed queue of a run it admitted: queued again";
    if (is_run_kind(kind) && under(path, kPriorityLabelPath))
      return "Kueue admitted the run at its old priority: queued again";
    if (kind == "StatefulSet" && object.count(kQueueLabelPath) != 0) {
      if (under(path, kQueueLabelPath) || under(path, "spec.replicas"))
        return "Kueue's webhook refuses it on a queued StatefulSet: re-created and admitted again";
      for (std::string_view field : {"resources", "ports", "affinity"}) {
        if (under(path, "spec.template") &&
            path.find("." + std::string(field)) != std::string::npos)
          return "Kueue admitted the pods' " + std::string(field) +
                 " with the pod group: re-created and admitted again";
      }
    }
    return KubeProvider::replace_reason(kind, path, object);
  }

  // A run Kueue queues carries its queue-name label.
  std::vector<std::string> queue_args(const plan::PlanObject& object,
                                      const std::string& yaml) const override {
    if (yaml.find("kueue.x-k8s.io/queue-name:") == std::string::npos) return {};
    return kueue_workload_args(object.namespace_, object.name);
  }

  // Kueue keeps a queued JobSet suspended, and a queued StatefulSet's pods gated, until it
  // admits the workload: no pod, and its Workload says why.
  void print_queue(std::ostream& out, const plan::day2::Session& session) const override {
    for (const plan::PlanObject& object : session.env().plan.objects) {
      if (object.kind != "JobSet" && object.kind != "StatefulSet") continue;
      Diagnostics ignored;  // no Kueue, or no Workload: nothing to say
      std::optional<std::string> text =
          session.capture(kueue_workload_args(session.namespace_(), object.name), ignored);
      const std::string queued = text ? plan::day2::parse_queued(*text) : "";
      if (!queued.empty()) out << "  " << queued << '\n';
      return;
    }
  }

 private:
  target::kubernetes::KubernetesTarget target_;
};

}  // namespace

const Provider& kubernetes_provider() {
  static const KubernetesProvider provider;
  return provider;
}

}  // namespace mlenv::target
