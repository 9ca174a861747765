#pragma once
// One emitted Kubernetes object with what the plan needs to know about it, and the helpers
// every builder uses for its metadata.

#include <map>
#include <string>

#include "targets/common/value.h"

namespace mlenv::target {

/// Apply order groups (compiler/plan/PLAN_JSON.md): lower groups are applied first.
enum class ApplyOrder : int {
  ClusterAdmin = 0,  ///< admission policies, Role, RoleBinding, ServiceAccount
  Network = 1,       ///< NetworkAttachmentDefinitions
  Storage = 2,       ///< PVCs
  Config = 3,        ///< ConfigMaps
  Image = 4,         ///< where the built image is stored
  Build = 5,         ///< how the image is built
  Service = 6,       ///< Services
  Workload = 7,      ///< StatefulSet
  Route = 8,         ///< Routes or Ingresses
  Policy = 9,        ///< NetworkPolicy
};

struct Object {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string namespace_name;  ///< "" for cluster-scoped objects
  bool admin = false;          ///< needs cluster-admin: written under `<cluster>/_admin/`
  /// Named by the cluster, not the env (an attachment, the cluster's ServiceAccount): every env
  /// of the namespace emits the same bytes and applies it, none labels or prunes it as its own.
  bool shared = false;
  ApplyOrder order = ApplyOrder::Workload;
  Value body;  ///< the whole object: apiVersion, kind, metadata, spec...

  /// `Kind/name`, unique within an env.
  std::string address() const { return kind + "/" + name; }
  /// Stable file name: `<kind in lower case>-<name>.yaml`.
  std::string file_name() const;
};

/// A new object whose body already holds apiVersion, kind and metadata (name, namespace when
/// set, labels when not empty, annotations when not empty), in that order.
Object make_object(std::string api_version, std::string kind, std::string name,
                   std::string namespace_name, const std::map<std::string, std::string>& labels,
                   const std::map<std::string, std::string>& annotations = {});

/// A string map as a Value (keys sorted: the order carries no meaning).
Value string_map(const std::map<std::string, std::string>& entries);

}  // namespace mlenv::target
