#pragma once
// The rules every Kubernetes-based target runs on its names and emitted objects (codes E0411,
// E0412, E0413, E0423, E0504 in compiler/diag/codes_target.def).

#include <initializer_list>
#include <string_view>
#include <vector>

#include "compiler/diag/diagnostic.h"
#include "targets/common/env_layout.h"
#include "targets/common/object.h"
#include "targets/kube/run_workload.h"

namespace mlenv::target::kube {

/// A DNS label's longest length (RFC 1123): hostnames, Service names, a Route host's first label.
inline constexpr std::size_t kDnsLabelMax = 63;

/// The value at `keys` below `v`, or nullptr where a step is missing or not a map.
const Value* value_at(const Value& v, std::initializer_list<std::string_view> keys);

/// E0504: the base image names a tag other than `latest`, or a digest.
void check_pinned_image(const ir::Env& env, Diagnostics& diagnostics);
/// E0411: StatefulSet name, pod hostnames (a run's as `run` names them, with their random
/// suffix where its admission counts it) and the headless Service fit their DNS limits.
void check_names(const EnvLayout& layout, const RunWorkload& run, Diagnostics& diagnostics);
/// E0423: the rendezvous and master ports differ from each other and from every other port
/// a container of the pod listens on (tools, their oauth-proxies, debugpy).
void check_ports(const EnvLayout& layout, Diagnostics& diagnostics);
/// E0412: networks annotation entries, NetworkAttachmentDefinitions and SR-IOV resource units
/// each equal the number of rails (or are all zero without SR-IOV).
void check_rails(const EnvLayout& layout, const std::vector<Object>& objects,
                 Diagnostics& diagnostics);

}  // namespace mlenv::target::kube
