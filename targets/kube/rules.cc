#include "targets/kube/rules.h"

#include "targets/kube/builders.h"

#include <set>
#include <string>

namespace mlenv::target::kube {
namespace {

constexpr std::size_t kStatefulSetMax = 52;  // leaves room for `-<10-char revision hash>`
constexpr std::size_t kPodNameSuffix = 6;    // `-` and the 5 characters of generateName

std::size_t count_json_entries(const std::string& list) {
  // The annotation is a compact JSON list of flat objects built by kube::networks_annotation.
  std::size_t n = 0;
  for (char c : list) n += c == '{';
  return n;
}

}  // namespace

const Value* value_at(const Value& v, std::initializer_list<std::string_view> keys) {
  const Value* cur = &v;
  for (std::string_view k : keys) {
    if (!cur->is_map()) return nullptr;
    cur = cur->find(k);
    if (!cur) return nullptr;
  }
  return cur;
}

void check_pinned_image(const ir::Env& env, Diagnostics& diagnostics) {
  const std::string& from = env.image.from;
  if (from.find("@sha256:") != std::string::npos) return;
  std::size_t slash = from.rfind('/');
  std::size_t colon = from.find(':', slash == std::string::npos ? 0 : slash);
  std::string tag = colon == std::string::npos ? "" : from.substr(colon + 1);
  if (!tag.empty() && tag != "latest") return;
  SourceRange at = env.image.from_range.valid() ? env.image.from_range : env.image.range;
  diagnostics.report(Code::E0504, at,
                     "base image `" + from + "` of image `" + env.image.name + "` is not pinned",
                     tag.empty() ? "add a tag or an @sha256: digest"
                                 : "`latest` moves; name a release tag or a digest");
}

void check_names(const EnvLayout& layout, const RunWorkload& run, Diagnostics& diagnostics) {
  const ir::Env& env = *layout.env;
  // A StatefulSet's pods are `<set>-<ordinal>`; a run's as its platform names them.
  const bool suffixed = layout.is_job && run.pod_name_limit;
  std::string last_host = layout.workload + std::string(layout.is_job ? run.hostname_infix : "-") +
                          std::to_string(std::max(env.nodes - 1, 0));
  auto report = [&](const std::string& what, std::size_t size, std::size_t max) {
    diagnostics.report(
        Code::E0411, env.range,
        what + " is " + std::to_string(size) + " characters, more than " + std::to_string(max),
        "shorten the env name");
  };
  if (layout.workload.size() > kStatefulSetMax) {
    report(std::string(layout.is_job ? "Job" : "StatefulSet") + " name `" + layout.workload + "`",
           layout.workload.size(), kStatefulSetMax);
  } else if (suffixed && last_host.size() + kPodNameSuffix > kDnsLabelMax) {
    report(std::string(run.kind) + " pod name `" + last_host + "-xxxxx` (with its random suffix)",
           last_host.size() + kPodNameSuffix, kDnsLabelMax);
  } else if (last_host.size() > kDnsLabelMax) {
    report("pod hostname `" + last_host + "`", last_host.size(), kDnsLabelMax);
  }
  if (layout.headless_service.size() > kDnsLabelMax) {
    report("headless Service name `" + layout.headless_service + "`",
           layout.headless_service.size(), kDnsLabelMax);
  }
}

void check_ports(const EnvLayout& layout, Diagnostics& diagnostics) {
  const ir::Env& env = *layout.env;
  // Every port a container of the pod binds: the pod shares one network namespace, so two
  // listeners on one port fail at start (EADDRINUSE), the second one crash-looping.
  std::vector<std::pair<int, std::string>> taken = {{env.master_port, "`master_port`"}};
  for (const ExposedService& s : layout.services) {
    taken.push_back({s.app_port, s.name + " (listening on 127.0.0.1)"});
    taken.push_back({s.proxy_port, "the oauth-proxy of " + s.name});
  }
  if (env.debug) taken.push_back({kDebugpyPort, "debugpy"});
  for (std::size_t i = 0; i < taken.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (taken[i].first != taken[j].first || (i > 0 && j > 0)) continue;
      diagnostics.report(Code::E0423, env.master_port_range,
                         "env `" + env.name + "`: `master_port` " +
                             std::to_string(env.master_port) + " is also the port of " +
                             taken[i].second,
                         "choose another `master_port`");
    }
    if (taken[i].first != env.rdzv_port) continue;
    // Against `master_port`, on whichever of the two the user set.
    const auto [field, at] =
        i == 0 ? env.port_clash_at() : std::pair{"rdzv_port", env.rdzv_port_range};
    const bool on_master = field == std::string("master_port");
    diagnostics.report(Code::E0423, at,
                       "env `" + env.name + "`: `" + field + "` " + std::to_string(env.rdzv_port) +
                           " is also the port of " + (on_master ? "`rdzv_port`" : taken[i].second),
                       "choose another `" + std::string(field) + "`");
  }
}

void check_rails(const EnvLayout& layout, const std::vector<Object>& objects,
                 Diagnostics& diagnostics) {
  const ir::Env& env = *layout.env;
  if (!layout.rdma_attached) return;
  const auto& rails = env.cluster.network.rdma->rails;
  std::size_t emitted = 0;  // rails whose attachment mlenvc emits
  for (const ir::Rail& rail : rails) emitted += rail.attachment == ir::Attachment::sriov;
  std::size_t attachments = 0, entries = 0, units = 0;
  for (const Object& o : objects) {
    if (o.kind == "NetworkAttachmentDefinition") ++attachments;
    if (o.order != ApplyOrder::Workload) continue;
    const Value* pod = pod_template_of(o);
    if (!pod) continue;
    const Value* networks =
        value_at(*pod, {"metadata", "annotations", "k8s.v1.cni.cncf.io/networks"});
    if (networks) entries = count_json_entries(networks->as_string());
    const Value* containers = value_at(*pod, {"spec", "containers"});
    if (!containers || containers->size() == 0) continue;
    const Value* limits = value_at(containers->items()[0], {"resources", "limits"});
    if (!limits) continue;
    std::set<std::string> resources;
    for (const ir::Rail& rail : rails) resources.insert(rail.resource);
    for (const Value& limit : limits->items()) {
      if (resources.count(limit.key())) units += static_cast<std::size_t>(limit.as_int());
    }
  }
  if (attachments == emitted && entries == rails.size() && units == rails.size()) return;
  diagnostics.report(Code::E0412, env.cluster.range,
                     "env `" + env.name + "` has " + std::to_string(rails.size()) +
                         " RDMA rails but " + std::to_string(entries) +
                         " network attachments in its pod, " + std::to_string(attachments) +
                         " NetworkAttachmentDefinitions and " + std::to_string(units) +
                         " device resource units",
                     "every rail needs its attachment and one unit of its resource");
}

}  // namespace mlenv::target::kube
