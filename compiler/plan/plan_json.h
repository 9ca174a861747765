#pragma once
// Reading plan.json (PLAN_JSON.md), the inventory that plan diffs by and apply orders,
// prunes and checks staleness by.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlenv::plan {

/// One Kubernetes object of an env, as listed in plan.json.
struct PlanObject {
  std::string address;  ///< `Kind/name`, unique within the env
  std::string api_version;
  std::string kind;
  std::string namespace_;  ///< "" for cluster-scoped objects
  std::string name;
  std::string file;  ///< relative to the env directory; `../_admin/…` for admin objects
  std::string sha256;
  int order = 0;
  bool admin = false;   ///< cluster-scoped, applied with cluster-admin rights
  bool shared = false;  ///< named by the cluster; every env of the namespace applies it
};

/// A file and its SHA-256, for `inputs` and `files`.
struct PlanDigest {
  std::string path;
  std::string sha256;
  friend bool operator==(const PlanDigest&, const PlanDigest&) = default;
};

/// The parsed plan.json of one env directory.
struct PlanManifest {
  int format_version = 0;
  std::string compiler_version;
  std::string target;
  std::string source;
  std::string cluster;
  std::string env;
  std::string namespace_;
  std::vector<PlanDigest> inputs;
  std::vector<PlanObject> objects;  ///< in apply order
  std::vector<PlanDigest> files;
};

/// Parses plan.json; on failure returns nullopt and says why in `error`.
std::optional<PlanManifest> parse_plan_json(std::string_view text, std::string& error);

/// The `source` of a plan.json without parsing the rest (plan reads it for every env that
/// disappeared from a render, to know whether this source owned it); "" if absent.
std::string plan_json_source(std::string_view text);

/// The API group of an apiVersion ("apps/v1" -> "apps", "v1" -> "").
std::string api_group(std::string_view api_version);

}  // namespace mlenv::plan
