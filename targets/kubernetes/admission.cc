#include "targets/kubernetes/admission.h"

#include <set>
#include <string>

#include "compiler/base/pattern.h"

namespace mlenv::target::kubernetes {
namespace {

using openapi::Issue;

// k8s.io/apimachinery/pkg/util/validation: IsDNS1035Label, IsDNS1123Subdomain and the name
// part of IsQualifiedName (label keys, which Kueue's topology annotations must be).
constexpr std::size_t kDnsLabelMax = 63;
constexpr std::size_t kDnsSubdomainMax = 253;
const Pattern& dns1035_label() {
  static const Pattern p = Pattern::literal("[a-z]([-a-z0-9]*[a-z0-9])?");
  return p;
}
const Pattern& dns1123_subdomain() {
  static const Pattern p =
      Pattern::literal("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  return p;
}
const Pattern& qualified_name_part() {
  static const Pattern p = Pattern::literal("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  return p;
}
// jobset_webhook.go: ruleNameFmt, minRuleNameLength 1, maxRuleNameLength 128.
const Pattern& failure_rule_name() {
  static const Pattern p = Pattern::literal("^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$");
  return p;
}
constexpr std::size_t kRuleNameMax = 128;

// Kueue's pod-set annotations (kueue apis/kueue/v1beta2 topology annotations).
constexpr const char* kQueueLabel = "kueue.x-k8s.io/queue-name";
constexpr const char* kTopologyAnnotations[] = {"kueue.x-k8s.io/podset-required-topology",
                                                "kueue.x-k8s.io/podset-preferred-topology",
                                                "kueue.x-k8s.io/podset-unconstrained-topology"};

bool is_dns1035_label(const std::string& s) {
  return s.size() <= kDnsLabelMax && dns1035_label().matches(s);
}

bool is_dns1123_subdomain(const std::string& s) {
  return s.size() <= kDnsSubdomainMax && dns1123_subdomain().matches(s);
}

// metav1validation.ValidateLabelName: `[prefix/]name`, prefix a DNS subdomain, name 1..63.
bool is_qualified_name(const std::string& s) {
  std::size_t slash = s.find('/');
  std::string name = slash == std::string::npos ? s : s.substr(slash + 1);
  if (slash != std::string::npos && !is_dns1123_subdomain(s.substr(0, slash))) return false;
  return !name.empty() && name.size() <= kDnsLabelMax && qualified_name_part().matches(name);
}

// The child at `key`, or a null node. Only const access: yaml-cpp's non-const operator[]
// inserts the key it looks up, and Node assignment rebinds the node it is assigned to.
YAML::Node child(const YAML::Node& node, const char* key) {
  const YAML::Node missing(YAML::NodeType::Undefined);  // a default Node is a defined null
  if (!node.IsDefined() || !node.IsMap()) return missing;
  const YAML::Node c = node[key];
  return c.IsDefined() ? c : missing;
}

YAML::Node at(const YAML::Node& node, const char* const* first, const char* const* last) {
  return first == last ? node : at(child(node, *first), first + 1, last);
}

YAML::Node at(const YAML::Node& node, std::initializer_list<const char*> keys) {
  return at(node, keys.begin(), keys.end());
}

std::string text(const YAML::Node& node) {
  return node.IsDefined() && node.IsScalar() ? node.Scalar() : "";
}

long number(const YAML::Node& node, long fallback) {
  return node.IsDefined() && node.IsScalar() ? node.as<long>(fallback) : fallback;
}

// Kueue's ValidateQueueName: the queue-name label is a LocalQueue name, a DNS subdomain.
void check_queue_label(const YAML::Node& object, std::vector<Issue>& issues) {
  const YAML::Node queue = at(object, {"metadata", "labels", kQueueLabel});
  if (queue.IsDefined() && !is_dns1123_subdomain(text(queue))) {
    issues.push_back({std::string("metadata.labels.") + kQueueLabel,
                      "Kueue's webhook refuses `" + text(queue) + "`: not a DNS subdomain"});
  }
}

// Kueue's ValidateTASPodSetRequest: at most one topology annotation per pod set, and the
// required or preferred level a label key.
void check_pod_set(const YAML::Node& pod_template, const std::string& path,
                   std::vector<Issue>& issues) {
  const YAML::Node annotations = at(pod_template, {"metadata", "annotations"});
  if (!annotations.IsDefined() || !annotations.IsMap()) return;
  int found = 0;
  for (const char* key : kTopologyAnnotations) {
    const YAML::Node value = child(annotations, key);
    if (!value.IsDefined()) continue;
    ++found;
    if (key != kTopologyAnnotations[2] && !is_qualified_name(text(value))) {
      issues.push_back({path + ".metadata.annotations." + key,
                        "Kueue's webhook refuses `" + text(value) + "`: not a label key"});
    }
  }
  if (found > 1) {
    issues.push_back({path + ".metadata.annotations",
                      "Kueue's webhook refuses more than one topology annotation"});
  }
}

void check_failure_rules(const YAML::Node& spec, std::vector<Issue>& issues) {
  const YAML::Node rules = at(spec, {"failurePolicy", "rules"});
  if (!rules.IsDefined() || !rules.IsSequence()) return;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const std::string name = text(at(rules[i], {"name"}));
    const std::string path = "spec.failurePolicy.rules[" + std::to_string(i) + "].name";
    if (name.empty() || name.size() > kRuleNameMax || !failure_rule_name().matches(name)) {
      issues.push_back({path, "the JobSet webhook refuses rule name `" + name +
                                  "`: it must match ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ "
                                  "and have 1 to 128 characters"});
    }
    if (!seen.insert(name).second) {
      issues.push_back({path, "the JobSet webhook refuses a second rule named `" + name + "`"});
    }
  }
}

// The longest names the JobSet controller generates (placement.GenJobName/GenPodName):
// `<jobset>-<replicated job>-<job index>` and, for Indexed Jobs, that plus `-<pod index>` and
// the 5 random characters Kubernetes appends after a dash.
void check_generated_names(const std::string& jobset, const YAML::Node& replicated,
                           const std::string& path, std::vector<Issue>& issues) {
  const std::string job = jobset + "-" + text(at(replicated, {"name"})) + "-" +
                          std::to_string(number(at(replicated, {"replicas"}), 1) - 1);
  if (!is_dns1035_label(job)) {
    issues.push_back({path + ".name", "the JobSet webhook refuses it: job name `" + job +
                                          "` is not a DNS-1035 label of at most 63 characters"});
  }
  const YAML::Node job_spec = at(replicated, {"template", "spec"});
  const YAML::Node completions = at(job_spec, {"completions"});
  if (text(at(job_spec, {"completionMode"})) != "Indexed" || !completions.IsDefined()) return;
  const std::string pod = job + "-" + std::to_string(number(completions, 1) - 1) + "-abcde";
  if (!is_dns1035_label(pod)) {
    issues.push_back({path + ".name", "the JobSet webhook refuses it: pod name `" + pod +
                                          "` is not a DNS-1035 label of at most 63 characters"});
  }
  check_pod_set(at(job_spec, {"template"}), path + ".template.spec.template", issues);
}

void check_jobset(const YAML::Node& object, std::vector<Issue>& issues) {
  const std::string name = text(at(object, {"metadata", "name"}));
  const YAML::Node spec = at(object, {"spec"});
  const std::string subdomain = text(at(spec, {"network", "subdomain"}));
  if (!subdomain.empty() && !(is_dns1123_subdomain(subdomain) && is_dns1035_label(subdomain))) {
    issues.push_back({"spec.network.subdomain",
                      "the JobSet webhook refuses `" + subdomain + "`: not a DNS-1035 label"});
  }
  const YAML::Node jobs = at(spec, {"replicatedJobs"});
  if (jobs.IsDefined() && jobs.IsSequence()) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      check_generated_names(name, jobs[i], "spec.replicatedJobs[" + std::to_string(i) + "]",
                            issues);
    }
  }
  check_failure_rules(spec, issues);
}

}  // namespace

std::vector<Issue> admission_issues(const YAML::Node& object) {
  std::vector<Issue> issues;
  if (!object.IsMap()) return issues;
  const std::string api_version = text(at(object, {"apiVersion"}));
  const std::string kind = text(at(object, {"kind"}));
  check_queue_label(object, issues);
  if (api_version.starts_with("jobset.x-k8s.io/") && kind == "JobSet") {
    check_jobset(object, issues);
  } else if (kind == "StatefulSet" || kind == "Job") {
    check_pod_set(at(object, {"spec", "template"}), "spec.template", issues);
  }
  return issues;
}

}  // namespace mlenv::target::kubernetes
