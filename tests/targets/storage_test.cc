// A cluster's `rwx` storage is one set of claims that its envs in the namespace share; an env's
// own `storage` block gives it claims of its own; `build` and `plan` say which. On OpenShift and
// Kubernetes, which render claims with the same builders (targets/kube/storage.cc).
//
// What the cluster does with them: a pod's `claimName` names a claim of the pod's own namespace
// (kubernetes/api core/v1 types.go, PersistentVolumeClaimVolumeSource: "claimName is the name of
// a PersistentVolumeClaim in the same namespace as the pod using this volume"), and a
// ReadWriteMany claim "can be mounted in read/write mode to many hosts" (types.go,
// PersistentVolumeAccessMode): the pods of train and eval, on any nodes, see one /workspace.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/targets/fixtures.h"
#include "tests/targets/test_util.h"

using namespace mlenv;
using namespace mlenv::testing;

namespace {

// The object in `out` at `path`, which must exist.
YAML::Node object_at(const target::Output& out, const std::string& path) {
  const target::File* file = find_file(out, path);
  INFO(path);
  REQUIRE(file != nullptr);
  return YAML::Load(file->content);
}

// The plan.json entry of `kind`/`name` in `env`'s plan.json.
YAML::Node planned(const target::Output& out, const std::string& env, const std::string& name) {
  YAML::Node plan = object_at(out, "cairo/" + env + "/plan.json");
  for (const YAML::Node& object : plan["objects"]) {
    if (object["kind"].as<std::string>() == "PersistentVolumeClaim" &&
        object["name"].as<std::string>() == name)
      return object;
  }
  FAIL("no claim " << name << " in " << env << "'s plan.json");
  return {};
}

// How many objects of the `-o -` stream are the claim `name`.
std::size_t streamed(const target::Output& out, const std::string& name) {
  return static_cast<std::size_t>(std::count_if(out.stream.begin(), out.stream.end(), [&](auto i) {
    YAML::Node o = YAML::Load(out.files[i].content);
    return o["kind"].as<std::string>() == "PersistentVolumeClaim" &&
           o["metadata"]["name"].as<std::string>() == name;
  }));
}

// `workload` is the file name of each env's workload, `%` standing for the env's name.
void check_shared_storage(const target::Output& out, const std::string& workload) {
  auto claims_of = [&](const std::string& env) {
    std::string file = workload;
    file.replace(file.find('%'), 1, env);
    return mounted_claims(object_at(out, "cairo/" + env + "/" + file));
  };
  // train and eval mount the cluster's claims; scratch its own.
  CHECK(claims_of("train") == std::map<std::string, std::string>{{"datasets", "cairo-datasets"},
                                                                 {"workspace", "cairo-workspace"}});
  CHECK(claims_of("eval") == claims_of("train"));
  CHECK(claims_of("scratch") ==
        std::map<std::string, std::string>{{"datasets", "scratch-datasets"},
                                           {"workspace", "scratch-workspace"}});

  // The cluster's claim: ReadWriteMany, labelled by no env (no env's ApplySet prunes it), the
  // same bytes in each env's kustomization, in the stream once, and shared in plan.json.
  YAML::Node shared = object_at(out, "cairo/train/persistentvolumeclaim-cairo-workspace.yaml");
  CHECK(shared["spec"]["accessModes"][0].as<std::string>() == "ReadWriteMany");
  CHECK(shared["spec"]["resources"]["requests"]["storage"].as<std::string>() == "100Gi");
  CHECK(shared["metadata"]["namespace"].as<std::string>() == "nccl-test");
  CHECK_FALSE(shared["metadata"]["labels"]["app.kubernetes.io/instance"]);
  CHECK(find_file(out, "cairo/eval/persistentvolumeclaim-cairo-workspace.yaml")->content ==
        find_file(out, "cairo/train/persistentvolumeclaim-cairo-workspace.yaml")->content);
  CHECK(find_file(out, "cairo/scratch/persistentvolumeclaim-cairo-workspace.yaml") == nullptr);
  CHECK(find_file(out, "cairo/train/persistentvolumeclaim-train-workspace.yaml") == nullptr);
  CHECK(streamed(out, "cairo-workspace") == 1);
  CHECK(planned(out, "train", "cairo-workspace")["shared"].as<bool>());
  CHECK(planned(out, "eval", "cairo-datasets")["shared"].as<bool>());

  // scratch's own claim: its size, its labels, an object of its own.
  YAML::Node own = object_at(out, "cairo/scratch/persistentvolumeclaim-scratch-workspace.yaml");
  CHECK(own["spec"]["accessModes"][0].as<std::string>() == "ReadWriteMany");
  CHECK(own["spec"]["resources"]["requests"]["storage"].as<std::string>() == "2Ti");
  CHECK(own["metadata"]["labels"]["app.kubernetes.io/instance"].as<std::string>() == "scratch");
  CHECK_FALSE(planned(out, "scratch", "scratch-workspace")["shared"].as<bool>());
  CHECK(streamed(out, "scratch-workspace") == 1);

  // What build and plan print: which envs share which claims, and whose are their own.
  const std::vector<std::string>& notes = out.notes;
  CHECK(std::count(notes.begin(), notes.end(),
                   "cairo/eval, cairo/train: share the claims `cairo-workspace` and "
                   "`cairo-datasets` of cluster `cairo` in namespace `nccl-test` (ReadWriteMany); "
                   "an env's own `storage` block gives it its own") == 1);
  CHECK(std::count(notes.begin(), notes.end(),
                   "cairo/scratch: its own claims `scratch-workspace` and `scratch-datasets` (its "
                   "`storage` block), which no other env mounts") == 1);
}

}  // namespace

TEST_CASE("openshift: a cluster's envs mount its claims, an env's own storage its own",
          "[storage]") {
  Diagnostics d;
  target::Output out = render(program_of(shared_storage_envs()), d);
  CHECK(d.all().empty());
  check_shared_storage(out, "job-%.yaml");
}

TEST_CASE("kubernetes: a cluster's envs mount its claims, an env's own storage its own",
          "[storage][kubernetes]") {
  std::vector<ir::Env> envs = shared_storage_envs();
  for (ir::Env& env : envs) {
    env.cluster.platform = ir::Platform::kubernetes;
    env.image.registry = "registry.example.com/ml";
  }
  Diagnostics d;
  target::Output out = render(program_of(envs), d);
  CHECK(d.all().empty());
  check_shared_storage(out, "jobset-%.yaml");
}

TEST_CASE("an env's own claims named like its namespace's shared ones are E0413", "[storage]") {
  std::vector<ir::Env> envs = shared_storage_envs();
  envs[2].name = "cairo";  // its own claims would be `cairo-workspace`, the cluster's name
  Diagnostics d;
  target::make_program_target()->check(program_of(envs), d);
  CHECK(has_code(d, Code::E0413));

  Diagnostics fine;
  target::make_program_target()->check(program_of(shared_storage_envs()), fine);
  CHECK_FALSE(has_code(fine, Code::E0413));
}
