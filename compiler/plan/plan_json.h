#pragma once
// Reading plan.json (PLAN_JSON.md), the inventory that plan diffs by and apply orders,
// prunes and checks staleness by.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/program.h"

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

/// A Secret the env needs and apply creates when it is missing, with random bytes.
struct PlanSecret {
  std::string name;
  std::string key;
  int random_bytes = 0;
  bool hex = false;  ///< `"encoding": "hex"`: the bytes as hex text (an environment variable)
};

/// An admission policy (OpenShift's) the env's ServiceAccount must be allowed to `use`; apply
/// checks it, never grants it.
struct PlanGrant {
  std::string scc;
  std::string service_account;
};

/// A post-apply action, run right after the object named by `after`.
struct PlanAction {
  std::string action;            ///< "build", "push", "rollout", "complete", "submit" (Slurm) or
                                 ///< "start" (local)
  std::string after;             ///< `Kind/name` of an object of the env
  std::string build_config;      ///< build: the build configuration to start
  std::string image_stream_tag;  ///< build: `stream:tag` holding the built image
  std::string image;       ///< build: the image reference workloads name, replaced by the digest;
                           ///< push: the image built and pushed
  std::string dockerfile;  ///< push: the Dockerfile, relative to the plan directory
  std::string script;      ///< submit: the env's batch script, relative to its directory
  /// start: what runs the nodes of an env with an image (`podman`, `docker`, `host`), "" for
  /// the first container runtime on PATH; `image` and `dockerfile` as for push.
  std::string runtime;
};

/// The parsed plan.json of one env directory.
struct PlanManifest {
  int format_version = 0;
  std::string compiler_version;
  /// Which provider applies it (platforms/provider.h): its objects, actions and day-2 driver.
  ir::Platform platform = ir::Platform::openshift;
  std::string source;
  std::string cluster;
  /// The cluster's `api`: the host of its API server, which apply and the day-2 commands
  /// compare with the client's (E0719); "" in plans written before the key.
  std::string api;
  std::string env;
  std::string namespace_;
  std::vector<PlanDigest> inputs;   ///< plans before `inputs_sha256`: every file the program read
  std::string inputs_sha256;        ///< what this env's render reads ("" in older plans)
  std::vector<PlanObject> objects;  ///< in apply order
  std::vector<PlanDigest> files;
  std::string env_kind = "dev";  ///< "dev" (StatefulSet), "run" or "acceptance" (Indexed Job)
  std::vector<PlanSecret> secrets;
  std::vector<PlanGrant> grants;
  std::vector<PlanAction> actions;  ///< absent in older plans: derived from the objects
  /// `nodes`: pods (ranks) of the workload; 0 in plans written before the key.
  int nodes = 0;
  /// `storage` is `rwx`: one /workspace every pod mounts. Plans written before the key count
  /// as per-pod storage, so sync copies to every pod (never too few).
  bool shared_workspace = false;
  std::map<std::string, int> ports;  ///< `ports`: tool name → port in the pod
};

/// Parses plan.json; on failure returns nullopt and says why in `error`.
std::optional<PlanManifest> parse_plan_json(std::string_view text, std::string& error);

/// The `objects` of a plan.json read by a flat scan rather than a YAML parse (the differ reads
/// the plan.json of every env that changed: a first plan of a fleet reads 1,000); nullopt when
/// the text is not as plan.json writes it (then parse_plan_json decides).
std::optional<std::vector<PlanObject>> scan_plan_objects(std::string_view text);

/// The `source` of a plan.json without parsing the rest (plan reads it for every env that
/// disappeared from a render, to know whether this source owned it); "" if absent.
std::string plan_json_source(std::string_view text);

/// The first string member `key` of a plan.json without parsing it ("" if absent): for the
/// top-level keys written before `objects` (`env`, `namespace`).
std::string plan_json_string(std::string_view text, std::string_view key);

/// The program's inputs file of `source` (`_inputs/<source, %-escaped>.json`), relative to the
/// plan directory.
std::string program_inputs_path(std::string_view source);

/// The `inputs` of a program's inputs file; on failure nullopt with the reason in `error`.
std::optional<std::vector<PlanDigest>> parse_program_inputs(std::string_view text,
                                                            std::string& error);

/// The API group of an apiVersion ("apps/v1" -> "apps", "v1" -> "").
std::string api_group(std::string_view api_version);

}  // namespace mlenv::plan
