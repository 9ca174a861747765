#pragma once
// plan.json (compiler/plan/PLAN_JSON.md, format version 1), the one model of it: the document
// (PlanManifest), its one writer (write_plan_json, and plan_json, which makes the document of
// a rendered env) and its one reader (parse_plan_json), with the program's `_inputs/` file.
// The renderers write it into every env directory; plan diffs by it, apply orders, prunes and
// checks staleness by it, and the day-2 commands find their env's pods by it. What only one
// platform knows of it (its actions' fields, what older plans implied) is the provider's.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/ir/program.h"
#include "targets/common/env_layout.h"
#include "targets/common/object.h"
#include "targets/common/value.h"
#include "targets/target.h"

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
  friend bool operator==(const PlanObject&, const PlanObject&) = default;
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
  friend bool operator==(const PlanSecret&, const PlanSecret&) = default;
};

/// An admission policy of the platform (its name the platform's: plan.json's key `scc`) that
/// the env's ServiceAccount must be allowed to `use`; apply checks it, never grants it.
struct PlanGrant {
  std::string scc;
  std::string service_account;
  friend bool operator==(const PlanGrant&, const PlanGrant&) = default;
};

/// A post-apply action, run right after the object named by `after`. Which actions exist and
/// what their fields mean is the platform's (PLAN_JSON.md); the model writes a field when it
/// is not empty, in the order declared here.
struct PlanAction {
  std::string action;            ///< "build", "push", "rollout", "complete", "submit" (Slurm) or
                                 ///< "start" (local)
  std::string after;             ///< `Kind/name` of an object of the env
  std::string build_config;      ///< build: the build configuration to start
  std::string image_stream_tag;  ///< build: `stream:tag` holding the built image
  std::string script;            ///< submit: the env's batch script, relative to its directory
  std::string image;       ///< build: the image reference workloads name, replaced by the digest;
                           ///< push: the image built and pushed
  std::string dockerfile;  ///< push: the Dockerfile, relative to the plan directory
  /// start: what runs the nodes of an env with an image (`podman`, `docker`, `host`), "" for
  /// the first container runtime on PATH; absent for an env without one. `image` and
  /// `dockerfile` as for push.
  std::optional<std::string> runtime;
  friend bool operator==(const PlanAction&, const PlanAction&) = default;
};

/// The plan.json of one env directory: what the reader gives and the writer takes.
struct PlanManifest {
  int format_version = 1;
  std::string compiler_version;
  /// Which provider applies it (targets/provider.h): its objects, actions and day-2 driver.
  ir::Platform platform = ir::Platform::openshift;
  std::string source;
  std::string cluster;
  /// The host of the cluster's API server ("" in plans written before the key), which apply
  /// compares with its client's current server before it changes anything.
  std::string api;
  std::string env;
  std::string namespace_;
  std::string transport;  ///< "rdma" or "tcp"
  std::string transport_note;
  std::string env_kind = "dev";  ///< "dev" (StatefulSet), "run" or "acceptance" (Indexed Job)
  /// `nodes`: pods (ranks) of the workload; 0 in plans written before the key.
  int nodes = 0;
  /// `storage` is `rwx`: one /workspace every pod mounts. Plans written before the key count
  /// as per-pod storage, so sync copies to every pod (never too few).
  bool shared_workspace = false;
  /// `ports`: tool name → port in the pod, in the order written (debugpy, then the services).
  std::vector<std::pair<std::string, int>> ports;
  std::vector<PlanDigest> inputs;   ///< plans before `inputs_sha256`: every file the program
                                    ///< read (read, never written: `_inputs/` holds them)
  std::string inputs_sha256;        ///< what this env's render reads ("" in older plans)
  std::vector<PlanObject> objects;  ///< in apply order
  std::vector<PlanSecret> secrets;
  std::vector<PlanGrant> grants;
  /// Absent in plans written before the key: then what apply did after their objects, which
  /// the provider of the plan's platform says (Provider::add_implied_actions).
  std::vector<PlanAction> actions;
  std::vector<PlanDigest> files;
  friend bool operator==(const PlanManifest&, const PlanManifest&) = default;
};

/// plan.json's bytes of `plan`: keys in PLAN_JSON.md's order, two-space indentation, a final
/// newline. Reading them back gives `plan` again.
std::string write_plan_json(const PlanManifest& plan);

/// Parses plan.json, of any format version 1 plan written so far; on failure (hostile input
/// included) returns nullopt and says why in `error`.
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

namespace mlenv::target {

/// An object as the plan records it: where it was written and the hash of its bytes.
struct PlannedObject {
  const Object* object = nullptr;
  std::string file;  ///< relative to the env directory
  std::string sha256;
};

/// A file of the env directory (other than plan.json) and the hash of its bytes.
struct PlannedFile {
  std::string path;
  std::string sha256;
};

/// The program-wide part of every plan.json.
struct PlanContext {
  ir::Platform platform = ir::Platform::openshift;  ///< the cluster's platform
  std::string source;  ///< the root .mlenv file as given to the compiler
  Value inputs;        ///< [{path, sha256}] sorted by path, computed once per program
};

/// What apply does for the env besides applying its objects, as data (PLAN_JSON.md): the
/// Secrets it creates when missing, the grants it checks, and the actions after objects.
struct PlanActions {
  std::vector<plan::PlanSecret> secrets;
  std::vector<plan::PlanGrant> grants;
  std::vector<plan::PlanAction> actions;  ///< in apply order
};

/// The text plan.json's `inputs_sha256` digests: lines `key=<length>:<value>`, so that no
/// value can fake a key.
class DigestText {
 public:
  void add(const char* key, const std::string& value);
  void add(const char* key, long long value) { add(key, std::to_string(value)); }
  /// The count of `values`, then each of them, under `key`.
  void add(const char* key, const std::vector<std::string>& values);
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

/// Adds the `<env>-job-token` Secret the pods read MLENV_JOB_TOKEN from (key `token`): 32 random
/// bytes as hex, since an environment variable cannot hold every byte. Only the run's pods hold
/// it, so nobody who can read the committed boot.json can join the rendezvous (BOOT_CONFIG.md).
void add_job_token_secret(PlanActions& steps, const EnvLayout& layout);

/// The `inputs` array for `files` (sorted by path).
Value plan_inputs(const std::vector<ir::InputFile>& files);

/// plan.json's `inputs_sha256`: the SHA-256 of what the env's render reads (its merged
/// declaration with its cluster and image, the compiler version and the platform) and of what
/// it made (every object and file digest), so one env's change changes only its own plan.json
/// and no change that reaches the env's output can leave the digest alone.
std::string env_inputs_sha256(const ir::Env& env, ir::Platform platform,
                              const std::vector<PlannedObject>& objects,
                              const std::vector<PlannedFile>& files);

/// The program's file `_inputs/<source, %-escaped>.json` (PLAN_JSON.md): every file the program
/// read with its SHA-256, once per program rather than in every env directory.
File program_inputs_file(const PlanContext& context);

/// The plan.json document of one env; `objects` in apply order, `files` sorted by path.
plan::PlanManifest plan_manifest(const EnvLayout& layout, const PlanContext& context,
                                 const std::vector<PlannedObject>& objects,
                                 const std::vector<PlannedFile>& files, const PlanActions& steps);

/// plan.json for one env: write_plan_json of its plan_manifest.
std::string plan_json(const EnvLayout& layout, const PlanContext& context,
                      const std::vector<PlannedObject>& objects,
                      const std::vector<PlannedFile>& files, const PlanActions& steps);

}  // namespace mlenv::target
