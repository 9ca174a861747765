// apply against a recording stand-in for oc/kubectl: order, field manager, build and rollout
// waits, prune safety, --allow-destroy, refusal of uncommitted and stale plans, dry runs.

#include <catch2/catch.hpp>

#include "tests/plan/apply_fixture.h"

namespace mlenv::plan {
namespace {

using namespace testing;

const std::string kSsa = "apply --server-side --field-manager=mlenvc";

// An SR-IOV attachment as every env of the namespace plans it (`"shared": true`).
FakeObject shared_attachment() {
  FakeObject nad{"k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "rail1",
                 "spec:\n  config: '{}'\n", 2};
  nad.shared = true;
  return nad;
}

TEST_CASE("a first apply runs every object in order, builds, and waits for the rollout",
          "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  std::vector<std::string> expected = {
      "oc " + kSsa + " -f -",               // the SCC, cluster-scoped
      "oc " + kSsa + " -n nccl-test -f -",  // ApplySet parent
      "oc " + kSsa + " -n nccl-test -f -",  // ServiceAccount
      "oc " + kSsa + " -n nccl-test -f -",  // PVC
      "oc " + kSsa + " -n nccl-test -f -",  // ConfigMap
      "oc " + kSsa + " -n nccl-test -f -",  // ImageStream
      "oc " + kSsa + " -n nccl-test -f -",  // BuildConfig
      "oc start-build ml-dev-env -n nccl-test --wait",
      "oc " + kSsa + " -n nccl-test -f -",  // Service
      "oc " + kSsa + " -n nccl-test -f -",  // StatefulSet
      "oc rollout status statefulset/ml-dev-env -n nccl-test --timeout=30m",
      "oc " + kSsa + " -n nccl-test -f -",  // Route
  };
  CHECK(f.commands() == expected);
  std::string log = read_file(f.log);
  std::vector<std::string> kinds = {"SecurityContextConstraints",
                                    "ConfigMap",
                                    "ServiceAccount",
                                    "PersistentVolumeClaim",
                                    "ConfigMap",
                                    "ImageStream",
                                    "BuildConfig",
                                    "Service",
                                    "StatefulSet",
                                    "Route"};
  std::size_t at = 0;
  for (const std::string& kind : kinds) {
    at = log.find("\"kind\":\"" + kind + "\"", at);
    REQUIRE(at != std::string::npos);
  }
  CHECK(log.find("\"applyset.k8s.io/tooling\":\"mlenvc/v0.1.0\"") != std::string::npos);
  CHECK(log.find(
            "\"applyset.k8s.io/contains-group-kinds\":\"BuildConfig.build.openshift.io,ConfigMap,"
            "ImageStream.image.openshift.io,PersistentVolumeClaim,Route.route.openshift.io,Service,"
            "ServiceAccount,StatefulSet.apps\"") != std::string::npos);
  CHECK(log.find("\"labels\":{\"applyset.k8s.io/part-of\":\"applyset-") != std::string::npos);
  // Quoted YAML strings stay strings, plain numbers stay numbers.
  CHECK(log.find("{\"name\":\"PORT\",\"value\":\"8080\"}") != std::string::npos);
  CHECK(log.find("\"replicas\":2") != std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env") != "");
  CHECK(show(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env", "plan.json") ==
        show(f.dir.path(), "HEAD", "plans/barcelona/ml-dev-env/plan.json"));
}

TEST_CASE("a second apply of the same plan does not rebuild the image", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  REQUIRE(f.apply() == 0);
  for (const std::string& command : f.commands())
    CHECK(command.find("start-build") == std::string::npos);
  f.env.files["Dockerfile"] += "RUN pip install deepspeed\n";
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  CHECK(f.commands()[7] == "oc start-build ml-dev-env -n nccl-test --wait");
}

TEST_CASE("objects that left the plan are pruned through the ApplySet label, last", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  f.env.objects.pop_back();  // the Route
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  std::vector<std::string> commands = f.commands();
  REQUIRE(commands.size() >= 2);
  CHECK(commands[commands.size() - 2].starts_with(
      "oc delete routes.route.openshift.io -n nccl-test -l applyset.k8s.io/part-of=applyset-"));
  CHECK(commands[commands.size() - 2].ends_with(
      " --field-selector metadata.name=ml-dev-env-jupyter --ignore-not-found --wait=true"));
  CHECK(commands.back() == "oc " + kSsa + " -n nccl-test -f -");  // the parent, trimmed
  // Only objects it applied: a third apply has nothing left to prune.
  REQUIRE(f.apply() == 0);
  for (const std::string& command : f.commands())
    CHECK(command.find("delete") == std::string::npos);
}

TEST_CASE("PVCs and SCCs are never deleted unless --allow-destroy names each", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  f.env.objects.erase(f.env.objects.begin() + 2);  // the PVC
  f.env.objects.erase(f.env.objects.begin());      // the SCC
  f.commit_plan();
  CHECK(f.apply() == 1);
  CHECK(f.commands().empty());  // refused before running anything
  CHECK(f.err.find("error[E0704]: apply would delete "
                   "`barcelona/ml-dev-env/PersistentVolumeClaim/workspace`") != std::string::npos);
  CHECK(f.err.find("error[E0704]: apply would delete "
                   "`barcelona/_admin/SecurityContextConstraints/mlenvc-rdma`") !=
        std::string::npos);

  ApplyRequest partial;
  partial.steps.allow_destroy = {"barcelona/ml-dev-env/PersistentVolumeClaim/workspace"};
  CHECK(f.apply(partial) == 1);
  CHECK(f.commands().empty());

  ApplyRequest typo;
  typo.steps.allow_destroy = {"barcelona/ml-dev-env/PersistentVolumeClaim/workspace",
                              "barcelona/_admin/SecurityContextConstraints/mlenvc-rdma",
                              "barcelona/ml-dev-env/PersistentVolumeClaim/datasets"};
  CHECK(f.apply(typo) == 1);
  CHECK(f.err.find("error[E0705]") != std::string::npos);
  CHECK(f.commands().empty());

  ApplyRequest allowed;
  allowed.steps.allow_destroy = {"barcelona/ml-dev-env/PersistentVolumeClaim/workspace",
                                 "barcelona/_admin/SecurityContextConstraints/mlenvc-rdma"};
  REQUIRE(f.apply(allowed) == 0);
  std::vector<std::string> commands = f.commands();
  CHECK(std::count_if(commands.begin(), commands.end(), [](const std::string& c) {
          return c.starts_with("oc delete persistentvolumeclaims -n nccl-test");
        }) == 1);
  CHECK(std::count(commands.begin(), commands.end(),
                   "oc delete securitycontextconstraints.security.openshift.io mlenvc-rdma "
                   "--ignore-not-found --wait=true") == 1);
}

TEST_CASE("shared objects are applied without the env's label and kept unless allowed", "[apply]") {
  ApplyFixture f;
  FakeObject nad = shared_attachment();
  f.env.objects.insert(f.env.objects.begin() + 2, nad);
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  std::vector<std::string> applied = f.commands();
  CHECK(std::count(applied.begin(), applied.end(),
                   "oc apply --server-side --field-manager=mlenvc-ml-dev-env -n nccl-test -f -") ==
        1);  // the env's own field manager: other envs' fields on it stay theirs
  std::string log = read_file(f.log);
  std::size_t at = log.find("\"kind\":\"NetworkAttachmentDefinition\"");
  REQUIRE(at != std::string::npos);
  std::string line = log.substr(at, log.find('\n', at) - at);
  CHECK(line.find("applyset.k8s.io/part-of") == std::string::npos);
  // Not a kind of the env's ApplySet either.
  CHECK(log.find("NetworkAttachmentDefinition.k8s.cni.cncf.io") == std::string::npos);
  // Another env of the namespace may use it: leaving this plan does not delete it.
  f.env.objects.erase(f.env.objects.begin() + 2);
  f.commit_plan();
  CHECK(f.apply() == 1);
  CHECK(f.commands().empty());
  CHECK(f.err.find("error[E0704]: apply would delete "
                   "`barcelona/ml-dev-env/NetworkAttachmentDefinition/rail1`") !=
        std::string::npos);
  CHECK(f.err.find("other envs of namespace `nccl-test` may use it") != std::string::npos);
  ApplyRequest allowed;
  allowed.steps.allow_destroy = {"barcelona/ml-dev-env/NetworkAttachmentDefinition/rail1"};
  REQUIRE(f.apply(allowed) == 0);
  std::vector<std::string> commands = f.commands();
  CHECK(std::count(commands.begin(), commands.end(),
                   "oc delete network-attachment-definitions.k8s.cni.cncf.io rail1 -n nccl-test "
                   "--ignore-not-found --wait=true") == 1);
}

TEST_CASE("an env that drops a shared object leaves it to the envs that keep it", "[apply]") {
  ApplyFixture f;
  FakeObject nad = shared_attachment();
  f.env.objects.insert(f.env.objects.begin() + 2, nad);
  FakeEnv bob = typical_env("bob");
  bob.objects.insert(bob.objects.begin() + 2, nad);
  f.others = {bob};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  f.env.objects.erase(f.env.objects.begin() + 2);  // ml-dev-env moves to TCP; bob keeps RDMA
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  for (const std::string& command : f.commands()) {
    CHECK(command.find("delete network-attachment-definitions") == std::string::npos);
  }
}

TEST_CASE("a change that cannot apply in place deletes the object first", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  std::string& body = object(f.env, "StatefulSet", "ml-dev-env").body;
  body.replace(body.find("podManagementPolicy: Parallel"), 29, "podManagementPolicy: OrderedReady");
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  std::vector<std::string> commands = f.commands();
  auto sts = std::find(commands.begin(), commands.end(),
                       "oc rollout status statefulset/ml-dev-env -n nccl-test --timeout=30m");
  REQUIRE(sts - commands.begin() >= 2);
  CHECK((sts - 2)->starts_with(
      "oc delete statefulsets.apps -n nccl-test -l applyset.k8s.io/part-of="));
}

TEST_CASE("an uncommitted plan is refused", "[apply]") {
  ApplyFixture f;
  write_file(f.dir.path() + "/plans/barcelona/ml-dev-env/statefulset-ml-dev-env.yaml", "edited\n");
  CHECK(f.apply() == 1);
  CHECK(f.commands().empty());
  CHECK(f.err.find("error[E0701]") != std::string::npos);
  CHECK(f.err.find("`plans/barcelona/ml-dev-env/statefulset-ml-dev-env.yaml` differs from HEAD") !=
        std::string::npos);
}

TEST_CASE("a stale plan is refused, naming the input that changed", "[apply]") {
  ApplyFixture f;
  f.fresh.inputs["cluster.mlenv"] = "v2";
  f.fresh.inputs["std/images/pytorch.mlenv"] = "new";
  CHECK(f.apply() == 1);
  CHECK(f.commands().empty());
  CHECK(f.err.find("input `cluster.mlenv` changed") != std::string::npos);
  CHECK(f.err.find("input `std/images/pytorch.mlenv` was added") != std::string::npos);
}

TEST_CASE("a dry run prints every command and runs none", "[apply]") {
  ApplyFixture f;
  ApplyRequest request;
  request.dry_run = true;
  REQUIRE(f.apply(request) == 0);
  CHECK(f.commands().empty());
  CHECK(f.out.find("$ $TMP/.bin/oc start-build ml-dev-env -n nccl-test --wait\n") !=
        std::string::npos);
  CHECK(f.out.find("$ $TMP/.bin/oc apply --server-side --field-manager=mlenvc -n nccl-test -f - < "
                   "plans/barcelona/ml-dev-env/statefulset-ml-dev-env.yaml\n") !=
        std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
}

TEST_CASE("the client can be named, and kubectl alone cannot start a build", "[apply]") {
  ApplyFixture f;
  std::filesystem::remove(f.dir.path() + "/.bin/oc");
  setenv("PATH", (f.dir.path() + "/.bin").c_str(), 1);
  CHECK(f.apply() == 1);
  CHECK(f.err.find("error[E0703]") != std::string::npos);
  ApplyRequest request;
  request.client = f.dir.path() + "/.bin/kubectl";
  f.env.objects.erase(f.env.objects.begin() + 5);  // no BuildConfig: nothing to build
  f.commit_plan();
  REQUIRE(f.apply(request) == 0);
  CHECK(f.commands()[0] == "kubectl " + kSsa + " -f -");
}

TEST_CASE("a failing command stops apply; nothing is pruned or recorded", "[apply]") {
  ApplyFixture f;
  setenv("MLENV_FAKE_FAIL", "start-build", 1);
  CHECK(f.apply() == 1);
  CHECK(f.commands().back() == "oc start-build ml-dev-env -n nccl-test --wait");
  CHECK(f.err.find("error[E0706]") != std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
}

}  // namespace
}  // namespace mlenv::plan
