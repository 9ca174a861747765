#pragma once
// Test fixtures for plan and apply: temporary git repositories and synthetic target outputs
// (multi-document YAML and a plan.json written as the target writes it).

#include <map>
#include <string>
#include <vector>

#include "targets/target.h"

namespace mlenv::plan::testing {

/// A temporary directory, removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Changes the current directory for the lifetime of the guard.
class ChangeDir {
 public:
  explicit ChangeDir(const std::string& dir);
  ~ChangeDir();

 private:
  std::string previous_;
};

/// `git init` with user.name/user.email set, on branch `main`, with one commit holding
/// README.md so HEAD exists (unless `empty`).
void init_repo(const std::string& dir, bool empty = false);
/// Writes a file (creating directories).
void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);
/// Commits `files` (path -> bytes, relative to the work tree) on top of HEAD like a user would,
/// through the index.
void user_commit(const std::string& dir, const std::map<std::string, std::string>& files,
                 const std::string& message);
/// Removes the directory `path` from the work tree and commits that, as `git rm -r` would.
void user_remove(const std::string& dir, const std::string& path, const std::string& message);
/// Commits a symbolic link at `path` pointing to `target`, through the index.
void user_commit_symlink(const std::string& dir, const std::string& path, const std::string& target,
                         const std::string& message);
/// The blob bytes at `path` in the commit `rev` ("HEAD", a ref name), or "<missing>".
std::string show(const std::string& dir, const std::string& rev, const std::string& path);
/// The commit message of `rev`.
std::string message(const std::string& dir, const std::string& rev);
/// The hex id `rev` resolves to, or "".
std::string rev_parse(const std::string& dir, const std::string& rev);
/// Every byte of every object in the repository (blobs, trees, commits) concatenated.
std::string all_objects(const std::string& dir);
/// Paths staged in the index with their blob ids.
std::map<std::string, std::string> index_entries(const std::string& dir);

/// One object of a synthetic env.
struct FakeObject {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string body;  ///< YAML after metadata, e.g. "spec:\n  replicas: 2\n"
  int order = 0;
  bool admin = false;
  bool shared = false;  ///< named by the cluster (an attachment): applied unlabelled, kept
};

/// A synthetic env: its objects, extra files and inputs.
struct FakeEnv {
  std::string cluster = "barcelona";
  std::string env = "ml-dev-env";
  std::string namespace_ = "nccl-test";
  std::string source = "cluster.mlenv";
  std::map<std::string, std::string> inputs = {{"cluster.mlenv", "v1"}};  ///< path -> bytes
  std::vector<FakeObject> objects;
  std::map<std::string, std::string> files;  ///< extra files (Dockerfile) by name
  std::string env_kind;                      ///< "" writes no `env_kind`
  std::vector<std::string> secrets;          ///< plan.json `secrets` entries, as JSON objects
  std::vector<std::string> grants;           ///< plan.json `grants` entries, as JSON objects
  std::vector<std::string> actions;          ///< plan.json `actions` entries; empty writes no key
  std::string platform;  ///< plan.json `platform`; "" writes the older `target: openshift`
  std::vector<std::string> more_keys;  ///< more plan.json members, as JSON (`"nodes": 2`)
};

/// The image the typical env's build produces and its StatefulSet names.
inline constexpr const char* kTypicalImage =
    "image-registry.openshift-image-registry.svc:5000/nccl-test/ml-dev-env:latest";

/// A typical env: ServiceAccount, PVC, ConfigMap, ImageStream, BuildConfig, Service,
/// StatefulSet, Route, and an admin SCC; a build action (tag `<env>:latest`), a rollout, the
/// oauth cookie Secret and the SCC grant.
FakeEnv typical_env(const std::string& env = "ml-dev-env");
/// The files a target would render for `envs`, plan.json included.
target::Output render(const std::vector<FakeEnv>& envs);
/// The object of `env` called `kind/name`.
FakeObject& object(FakeEnv& env, const std::string& kind, const std::string& name);

}  // namespace mlenv::plan::testing
