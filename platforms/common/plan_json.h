#pragma once
// plan.json (compiler/plan/PLAN_JSON.md, format version 1): the env's inventory, content
// hashes and input digests, shared by every target.

#include <string>
#include <vector>

#include "platforms/common/env_layout.h"
#include "platforms/common/object.h"
#include "platforms/common/value.h"
#include "platforms/target.h"

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
  Value secrets = Value::seq();  ///< [{name, key, random_bytes[, encoding]}]
  Value grants = Value::seq();   ///< [{scc, service_account}]
  Value actions = Value::seq();  ///< [{action, after, ...}] in apply order
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

/// plan.json for one env; `objects` in apply order, `files` sorted by path.
std::string plan_json(const EnvLayout& layout, const PlanContext& context,
                      const std::vector<PlannedObject>& objects,
                      const std::vector<PlannedFile>& files, const PlanActions& steps);

}  // namespace mlenv::target
