// apply against a recording stand-in for oc/kubectl: order, field manager, build and rollout
// waits, prune safety, --allow-destroy, refusal of uncommitted and stale plans, dry runs.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include "compiler/apply/applyset.h"
#include "compiler/apply/destroy.h"
#include "compiler/apply/runner.h"
#include "compiler/day2/commands.h"
#include "targets/kube/apply/step_runner.h"
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

const std::string kCheckNamespace = "oc get namespace nccl-test --ignore-not-found -o name";
const std::string kCanUse =
    "oc auth can-i use securitycontextconstraints/mlenvc-rdma "
    "--as=system:serviceaccount:nccl-test:ml-dev-env-sa -n nccl-test";
// start-build uploads a copy of only the build's context, not the plan root (issue #21.20).
const std::string kStartBuild = "oc start-build ml-dev-env --from-dir=$CONTEXT --wait -n nccl-test";
const std::string kShownStartBuild =
    "oc start-build ml-dev-env --from-dir=$TMP/plans --wait -n nccl-test";
const std::string kReadDigest =
    "oc get istag ml-dev-env:latest -n nccl-test -o jsonpath={.image.dockerImageReference}";

std::size_t count(const std::vector<std::string>& commands, const std::string& prefix) {
  return std::count_if(commands.begin(), commands.end(),
                       [&](const std::string& c) { return c.starts_with(prefix); });
}

// The stdin line the stand-in logged for the object of `kind`.
std::string applied_json(const std::string& log, const std::string& kind) {
  std::size_t at = log.find("\"kind\":\"" + kind + "\"");
  if (at == std::string::npos) return "";
  std::size_t begin = log.rfind('\n', at) + 1;
  return log.substr(begin, log.find('\n', at) - begin);
}

TEST_CASE("a first apply checks, creates the Secret, builds, and applies workloads by digest",
          "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  std::vector<std::string> expected = {
      kCheckNamespace,
      kCanUse,
      "oc " + kSsa + " -n nccl-test -f -",  // ApplySet parent
      "oc get secret ml-dev-env-oauth-cookie -n nccl-test --ignore-not-found -o name",
      "oc create secret generic ml-dev-env-oauth-cookie -n nccl-test "
      "--from-file=cookie_secret=/dev/stdin",
      "oc " + kSsa + " -n nccl-test -f -",  // ServiceAccount
      "oc " + kSsa + " -n nccl-test -f -",  // PVC
      "oc " + kSsa + " -n nccl-test -f -",  // ConfigMap
      "oc " + kSsa + " -n nccl-test -f -",  // ImageStream
      "oc " + kSsa + " -n nccl-test -f -",  // BuildConfig
      kStartBuild,
      kReadDigest,
      "oc " + kSsa + " -n nccl-test -f -",  // Service
      "oc " + kSsa + " -n nccl-test -f -",  // StatefulSet
      "oc " + kSsa + " -n nccl-test -f -",  // Route
      // Recorded as applied, then waited for (issue 30.1).
      "oc rollout status statefulset/ml-dev-env -n nccl-test --timeout=30m",
  };
  CHECK(f.commands() == expected);
  std::string log = read_file(f.log);
  std::vector<std::string> kinds = {"ConfigMap", "ServiceAccount", "PersistentVolumeClaim",
                                    "ConfigMap", "ImageStream",    "BuildConfig",
                                    "Service",   "StatefulSet",    "Route"};
  std::size_t at = 0;
  for (const std::string& kind : kinds) {
    at = log.find("\"kind\":\"" + kind + "\"", at);
    REQUIRE(at != std::string::npos);
  }
  // The SCC is the platform team's (`mlenvc apply --admin`): a researcher's apply skips it.
  CHECK(log.find("SecurityContextConstraints") == std::string::npos);
  CHECK(log.find("\"applyset.k8s.io/tooling\":\"mlenvc/v0.1.0\"") != std::string::npos);
  CHECK(log.find(
            "\"applyset.k8s.io/contains-group-kinds\":\"BuildConfig.build.openshift.io,ConfigMap,"
            "ImageStream.image.openshift.io,PersistentVolumeClaim,Route.route.openshift.io,Service,"
            "ServiceAccount,StatefulSet.apps\"") != std::string::npos);
  CHECK(log.find("\"labels\":{\"applyset.k8s.io/part-of\":\"applyset-") != std::string::npos);
  // Quoted YAML strings stay strings, plain numbers stay numbers.
  CHECK(log.find("{\"name\":\"PORT\",\"value\":\"8080\"}") != std::string::npos);
  CHECK(log.find("\"replicas\":2") != std::string::npos);
  // The StatefulSet runs the built image by digest, not the mutable tag.
  std::string sts = applied_json(log, "StatefulSet");
  CHECK(sts.find(std::string("\"image\":\"") + ApplyFixture::kDigest + "\"") != std::string::npos);
  CHECK(sts.find(kTypicalImage) == std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env") != "");
  CHECK(show(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env", "plan.json") ==
        show(f.dir.path(), "HEAD", "plans/barcelona/ml-dev-env/plan.json"));
}

TEST_CASE("the Secret gets random bytes on stdin, never in argv, output or git", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  std::string log = read_file(f.log);
  std::size_t at = log.find("stdin-bytes: 32 ");
  REQUIRE(at != std::string::npos);
  std::string hex = log.substr(at + 16, 64);
  CHECK(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(hex != std::string(64, '0'));
  for (const std::string& command : f.commands()) CHECK(command.find(hex) == std::string::npos);
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2)
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  CHECK(f.out.find(bytes) == std::string::npos);
  CHECK(all_objects(f.dir.path()).find(bytes) == std::string::npos);
  // Another apply: a different random value, were the Secret missing again.
  REQUIRE(f.apply() == 0);
  std::string again = read_file(f.log);
  REQUIRE(again.find("stdin-bytes: 32 ") != std::string::npos);
  CHECK(again.substr(again.find("stdin-bytes: 32 ") + 16, 64) != hex);
  // An existing Secret is neither read nor replaced.
  f.reply({"get secret|0|secret/ml-dev-env-oauth-cookie"}, true);
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "oc create secret") == 0);
  CHECK(read_file(f.log).find("stdin-bytes") == std::string::npos);
}

TEST_CASE("a dry run shows the Secret as random bytes and runs nothing", "[apply]") {
  ApplyFixture f;
  ApplyRequest request;
  request.dry_run = true;
  REQUIRE(f.apply(request) == 0);
  CHECK(f.commands().empty());
  CHECK(f.out.find("$ $TMP/.bin/oc create secret generic ml-dev-env-oauth-cookie -n nccl-test "
                   "--from-file=cookie_secret=/dev/stdin < <random 32 bytes> (when missing)\n") !=
        std::string::npos);
}

TEST_CASE("commands are shown with control characters escaped", "[apply]") {
  ApplyFixture f;
  f.env.secrets = {R"({"name": "cookie\u001b[2K\r", "key": "k", "random_bytes": 16})"};
  f.commit_plan();
  ApplyRequest request;
  request.dry_run = true;
  REQUIRE(f.apply(request) == 0);
  CHECK(f.out.find('\x1b') == std::string::npos);
  CHECK(f.out.find('\r') == std::string::npos);
  CHECK(f.out.find("get secret 'cookie\\u001b[2K\\u000d' -n nccl-test") != std::string::npos);
}

TEST_CASE("a missing namespace stops apply before any change", "[apply]") {
  ApplyFixture f;
  f.reply({"get namespace|0|"}, true);
  CHECK(f.apply() == 1);
  CHECK(f.commands() == std::vector<std::string>{kCheckNamespace, kCanUse});
  CHECK(f.err.find("error[E0710]: namespace `nccl-test` does not exist") != std::string::npos);
}

TEST_CASE("without the SCC grant a researcher's apply stops and names apply --admin", "[apply]") {
  ApplyFixture f;
  f.reply({"auth can-i|1|no"}, true);
  CHECK(f.apply() == 1);
  CHECK(f.commands() == std::vector<std::string>{kCheckNamespace, kCanUse});
  CHECK(f.err.find("error[E0711]: `system:serviceaccount:nccl-test:ml-dev-env-sa` may not use "
                   "SecurityContextConstraints `mlenvc-rdma`") != std::string::npos);
  CHECK(f.err.find("mlenvc apply --admin") != std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
}

TEST_CASE("apply --admin applies only the admin objects, and records them apart", "[apply]") {
  ApplyFixture f;
  FakeObject role{"rbac.authorization.k8s.io/v1",
                  "Role",
                  "ml-dev-env-use-scc",
                  "rules:\n- apiGroups: [security.openshift.io]\n  verbs: [use]\n",
                  0,
                  true};
  f.env.objects.insert(f.env.objects.begin() + 1, role);
  f.commit_plan();
  ApplyRequest admin;
  admin.steps.admin = true;
  REQUIRE(f.apply(admin) == 0);
  CHECK(f.commands() == std::vector<std::string>{
                            kCheckNamespace,
                            "oc " + kSsa + " -f -",               // the SCC, cluster-scoped
                            "oc " + kSsa + " -n nccl-test -f -",  // the Role
                        });
  std::string log = read_file(f.log);
  CHECK(applied_json(log, "SecurityContextConstraints").find("part-of") == std::string::npos);
  CHECK(applied_json(log, "Role").find("\"namespace\":\"nccl-test\"") != std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied-admin/barcelona/ml-dev-env") != "");
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
  // The researcher's apply that follows applies everything else, and no admin object.
  REQUIRE(f.apply() == 0);
  log = read_file(f.log);
  CHECK(log.find("\"kind\":\"Role\"") == std::string::npos);
  CHECK(log.find("\"kind\":\"StatefulSet\"") != std::string::npos);
}

TEST_CASE("a second apply of the same plan neither rebuilds nor changes the image", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  std::string first = applied_json(read_file(f.log), "StatefulSet");
  REQUIRE(f.apply() == 0);
  std::vector<std::string> commands = f.commands();
  CHECK(count(commands, "oc start-build") == 0);
  CHECK(count(commands, kReadDigest) == 1);                       // the current digest, reused
  CHECK(applied_json(read_file(f.log), "StatefulSet") == first);  // so the pods do not roll
  // The Dockerfile changed: a new build.
  f.env.files["Dockerfile"] += "RUN pip install deepspeed\n";
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  commands = f.commands();
  REQUIRE(commands.size() > 11);
  CHECK(commands[10] == kStartBuild);
  CHECK(commands[11] == kReadDigest);
}

TEST_CASE("a changed _runtime/ rebuilds, a missing ImageStreamTag builds", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  user_commit(f.dir.path(), {{"plans/_runtime/boot.cc", "int main() {}\n"}}, "runtime");
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), kStartBuild) == 1);
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "oc start-build") == 0);
  // The tag is gone (pruned by someone): build it again instead of failing.
  f.reply({"once:get istag|1|"}, true);
  REQUIRE(f.apply() == 0);
  std::vector<std::string> commands = f.commands();
  CHECK(count(commands, kReadDigest) == 2);
  CHECK(count(commands, kStartBuild) == 1);
}

TEST_CASE("a failed build prints the tail of its log and stops", "[apply]") {
  ApplyFixture f;
  f.reply({"start-build|1|", "logs bc/|0|step 3/7: pip install: no matching distribution"}, true);
  CHECK(f.apply() == 1);
  std::vector<std::string> commands = f.commands();
  REQUIRE(commands.size() >= 2);
  CHECK(commands[commands.size() - 2] == kStartBuild);
  CHECK(commands.back() == "oc logs bc/ml-dev-env -n nccl-test --tail=50");
  CHECK(f.out.find("step 3/7: pip install: no matching distribution\n") != std::string::npos);
  CHECK(f.err.find("error[E0706]") != std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
}

TEST_CASE("a build whose tag names no digest is refused", "[apply]") {
  ApplyFixture f;
  f.reply({"get istag|0|"}, true);
  CHECK(f.apply() == 1);
  CHECK(f.err.find("error[E0712]") != std::string::npos);
  CHECK(read_file(f.log).find("\"kind\":\"StatefulSet\"") == std::string::npos);
}

TEST_CASE("objects that left the plan are pruned through the ApplySet label, last", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  f.env.objects.pop_back();  // the Route
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  std::vector<std::string> commands = f.commands();
  REQUIRE(commands.size() >= 3);
  CHECK(commands[commands.size() - 3].starts_with(
      "oc delete routes.route.openshift.io -n nccl-test -l applyset.k8s.io/part-of=applyset-"));
  CHECK(commands[commands.size() - 3].ends_with(
      " --field-selector metadata.name=ml-dev-env-jupyter --ignore-not-found --wait=true"));
  CHECK(commands[commands.size() - 2] == "oc " + kSsa + " -n nccl-test -f -");  // the parent
  // The rollout is waited for once the env is recorded.
  CHECK(commands.back() == "oc rollout status statefulset/ml-dev-env -n nccl-test --timeout=30m");
  // Only objects it applied: a third apply has nothing left to prune.
  REQUIRE(f.apply() == 0);
  for (const std::string& command : f.commands())
    CHECK(command.find("delete") == std::string::npos);
}

TEST_CASE("PVCs and SCCs are never deleted unless --allow-destroy names each", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  f.env.objects.erase(f.env.objects.begin() + 2);  // the PVC
  f.commit_plan();
  CHECK(f.apply() == 1);
  CHECK(f.commands().empty());  // refused before running anything
  CHECK(f.err.find("error[E0704]: apply would delete "
                   "`barcelona/ml-dev-env/PersistentVolumeClaim/workspace`") != std::string::npos);

  ApplyRequest typo;
  typo.steps.allow_destroy = {"barcelona/ml-dev-env/PersistentVolumeClaim/workspace",
                              "barcelona/ml-dev-env/PersistentVolumeClaim/datasets"};
  CHECK(f.apply(typo) == 1);
  CHECK(f.err.find("error[E0705]") != std::string::npos);
  CHECK(f.commands().empty());

  ApplyRequest allowed;
  allowed.steps.allow_destroy = {"barcelona/ml-dev-env/PersistentVolumeClaim/workspace"};
  REQUIRE(f.apply(allowed) == 0);
  CHECK(count(f.commands(), "oc delete persistentvolumeclaims -n nccl-test") == 1);

  // The SCC is pruned only by the platform team's apply --admin, and only when allowed.
  ApplyRequest admin;
  admin.steps.admin = true;
  REQUIRE(f.apply(admin) == 0);
  f.env.objects.erase(f.env.objects.begin());  // the SCC
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "oc delete") == 0);
  CHECK(f.apply(admin) == 1);
  CHECK(f.commands() == std::vector<std::string>{});
  CHECK(f.err.find("error[E0704]: apply would delete "
                   "`barcelona/_admin/SecurityContextConstraints/mlenvc-rdma`") !=
        std::string::npos);
  admin.steps.allow_destroy = {"barcelona/_admin/SecurityContextConstraints/mlenvc-rdma"};
  REQUIRE(f.apply(admin) == 0);
  CHECK(f.commands().back() ==
        "oc delete securitycontextconstraints.security.openshift.io mlenvc-rdma "
        "--ignore-not-found --wait=true");
}

TEST_CASE("a shared object changes under the cluster's one field manager, with no conflict",
          "[apply]") {
  // Issue 30.2. The stand-in holds each field's managers as the API server does (fake_api.py):
  // under a manager per env, both envs co-own the attachment's config and any later change by
  // either is refused as a conflict. Under the cluster's one manager, the change applies.
  ApplyFixture f;
  const std::string state = f.dir.path() + "/.fake-state.json";
  setenv("MLENV_FAKE_STATE", state.c_str(), 1);
  FakeObject nad = shared_attachment();
  f.env.objects.insert(f.env.objects.begin() + 2, nad);
  FakeEnv bob = typical_env("bob");
  bob.objects.insert(bob.objects.begin() + 2, nad);
  f.others = {bob};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  // The rail's IPAM changes, in every env's copy.
  for (FakeEnv* env : {&f.env, &f.others[0]})
    object(*env, "NetworkAttachmentDefinition", "rail1").body =
        "spec:\n  config: '{\"ipam\":{}}'\n";
  f.commit_plan();
  CHECK(f.apply() == 0);
  CHECK(f.err.find("conflict") == std::string::npos);
  CHECK(read_file(state).find("ipam") != std::string::npos);
  CHECK(message(f.dir.path(), "refs/mlenv/applied/barcelona/bob")
            .find("Shared-Manager: mlenvc-barcelona-shared\n") != std::string::npos);
}

TEST_CASE("shared objects are applied without the env's label and kept unless allowed", "[apply]") {
  ApplyFixture f;
  FakeObject nad = shared_attachment();
  f.env.objects.insert(f.env.objects.begin() + 2, nad);
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  std::vector<std::string> applied = f.commands();
  CHECK(std::count(applied.begin(), applied.end(),
                   "oc apply --server-side --field-manager=mlenvc-barcelona-shared -n nccl-test "
                   "-f -") == 1);  // the cluster's one field manager of its shared objects
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
                   "`barcelona/_shared/NetworkAttachmentDefinition/rail1`") != std::string::npos);
  CHECK(f.err.find("other envs of namespace `nccl-test` may use it") != std::string::npos);
  ApplyRequest allowed;
  allowed.steps.allow_destroy = {"barcelona/_shared/NetworkAttachmentDefinition/rail1"};
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
  auto del = std::find_if(commands.begin(), commands.end(), [](const std::string& c) {
    return c.starts_with("oc delete statefulsets.apps -n nccl-test -l applyset.k8s.io/part-of=");
  });
  REQUIRE(del != commands.end());
  REQUIRE(del + 1 != commands.end());
  CHECK(*(del + 1) == "oc " + kSsa + " -n nccl-test -f -");
  CHECK(applied_json(read_file(f.log), "StatefulSet").find("OrderedReady") != std::string::npos);
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

TEST_CASE("the build's _runtime/ sources must be committed too", "[apply]") {
  ApplyFixture f;
  user_commit(f.dir.path(), {{"plans/_runtime/boot.cc", "int main() {}\n"}}, "runtime");
  write_file(f.dir.path() + "/plans/_runtime/boot.cc", "int main() { return 1; }\n");
  CHECK(f.apply() == 1);
  CHECK(f.commands().empty());
  CHECK(f.err.find("`plans/_runtime/boot.cc` differs from HEAD") != std::string::npos);
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

TEST_CASE("a committed hand edit to a plan object is refused", "[apply]") {
  ApplyFixture f;
  const std::string path = "plans/barcelona/ml-dev-env/statefulset-ml-dev-env.yaml";
  std::string yaml = show(f.dir.path(), "HEAD", path);
  yaml.replace(yaml.find("  template:\n    spec:\n"), 23,
               "  template:\n    spec:\n      hostNetwork: true\n      hostPID: true\n");
  user_commit(f.dir.path(), {{path, yaml}}, "faster networking");
  CHECK(f.apply() == 1);
  CHECK(f.commands().empty());
  CHECK(f.err.find("error[E0717]: the plan in `plans/barcelona/ml-dev-env` was edited after "
                   "`mlenvc plan`") != std::string::npos);
  CHECK(f.err.find("`" + path + "` differs from a fresh render of `cluster.mlenv`") !=
        std::string::npos);
  // A file added by hand to the env directory, and an edited admin object, too.
  ApplyFixture g;
  user_commit(g.dir.path(),
              {{"plans/barcelona/ml-dev-env/extra.yaml", "kind: Pod\n"},
               {"plans/barcelona/_admin/securitycontextconstraints-mlenvc-rdma.yaml",
                "allowPrivilegedContainer: true\n"}},
              "extras");
  CHECK(g.apply() == 1);
  CHECK(g.err.find("`plans/barcelona/ml-dev-env/extra.yaml` differs") != std::string::npos);
  CHECK(
      g.err.find("`plans/barcelona/_admin/securitycontextconstraints-mlenvc-rdma.yaml` differs") !=
      std::string::npos);
}

TEST_CASE("a dry run prints every command and runs none", "[apply]") {
  ApplyFixture f;
  ApplyRequest request;
  request.dry_run = true;
  REQUIRE(f.apply(request) == 0);
  CHECK(f.commands().empty());
  CHECK(f.out.find("$ $TMP/.bin/" + kShownStartBuild + "\n") != std::string::npos);
  CHECK(f.out.find("$ $TMP/.bin/oc get istag ml-dev-env:latest -n nccl-test -o "
                   "'jsonpath={.image.dockerImageReference}'\n") != std::string::npos);
  CHECK(f.out.find("$ $TMP/.bin/oc apply --server-side --field-manager=mlenvc -n nccl-test -f - < "
                   "plans/barcelona/ml-dev-env/statefulset-ml-dev-env.yaml (image " +
                   std::string(kTypicalImage) + " by its built digest)\n") != std::string::npos);
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
  f.env.actions.erase(f.env.actions.begin());
  f.commit_plan();
  REQUIRE(f.apply(request) == 0);
  CHECK(f.commands()[2] == "kubectl " + kSsa + " -n nccl-test -f -");
}

TEST_CASE("a failing command stops apply, nothing is pruned or recorded", "[apply]") {
  ApplyFixture f;
  setenv("MLENV_FAKE_FAIL", "start-build", 1);
  CHECK(f.apply() == 1);
  CHECK(count(f.commands(), "oc start-build") == 1);
  CHECK(applied_json(read_file(f.log), "StatefulSet").empty());
  CHECK(f.err.find("error[E0706]") != std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
}

TEST_CASE("a failing rollout stops apply after the env is recorded as applied", "[apply]") {
  // Every object is on the cluster before the rollout is waited for (issue 30.1).
  ApplyFixture f;
  setenv("MLENV_FAKE_FAIL", "rollout", 1);
  CHECK(f.apply() == 1);
  CHECK(f.commands().back() ==
        "oc rollout status statefulset/ml-dev-env -n nccl-test --timeout=30m");
  CHECK(f.err.find("error[E0706]") != std::string::npos);
  CHECK(f.out.find("barcelona/ml-dev-env is applied, not ready: `StatefulSet/ml-dev-env`") !=
        std::string::npos);
  CHECK(!rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
}

// A run: the typical env with an Indexed Job `trainer` in place of its StatefulSet.
void make_run(ApplyFixture& f) {
  FakeObject& sts = object(f.env, "StatefulSet", "ml-dev-env");
  sts = {"batch/v1",
         "Job",
         "trainer",
         "spec:\n  completionMode: Indexed\n  completions: 2\n  parallelism: 2\n  template:\n"
         "    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n"
         "        image: \"" +
             std::string(kTypicalImage) + "\"\n        command: [python, train.py]\n",
         8,
         false};
  f.env.env_kind = "run";
  f.env.actions = {f.env.actions[0], "{\"action\": \"complete\", \"after\": \"Job/trainer\"}"};
  f.commit_plan();
}

const std::string kWaitJob =
    "oc get job trainer -n nccl-test -o jsonpath={.status.conditions[?(@.status==\"True\")].type}";

TEST_CASE("a run is applied once: an unchanged Job is not applied again", "[apply]") {
  ApplyFixture f;
  make_run(f);
  REQUIRE(f.apply() == 0);
  std::string job = applied_json(read_file(f.log), "Job");
  CHECK(job.find(std::string("\"image\":\"") + ApplyFixture::kDigest + "\"") != std::string::npos);
  CHECK(count(f.commands(), "oc delete") == 0);
  CHECK(count(f.commands(), "oc get job") == 0);  // no --wait, no polling
  // The same plan again, even after the Job's ttl removed it: the finished run stays finished.
  REQUIRE(f.apply() == 0);
  CHECK(applied_json(read_file(f.log), "Job").empty());
  CHECK(count(f.commands(), "oc delete") == 0);
}

TEST_CASE("a changed run replaces its Job: delete with its pods first, then create", "[apply]") {
  ApplyFixture f;
  make_run(f);
  REQUIRE(f.apply() == 0);
  std::string& body = object(f.env, "Job", "trainer").body;
  body.replace(body.find("train.py"), 8, "train2.py");
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  std::vector<std::string> commands = f.commands();
  auto del = std::find_if(commands.begin(), commands.end(), [](const std::string& c) {
    return c.starts_with("oc delete jobs.batch -n nccl-test -l applyset.k8s.io/part-of=");
  });
  REQUIRE(del != commands.end());
  CHECK(
      del->ends_with("--field-selector metadata.name=trainer --ignore-not-found --wait=true "
                     "--cascade=foreground"));
  CHECK(count(commands, "oc delete") == 1);
  CHECK(*(del + 1) == "oc " + kSsa + " -n nccl-test -f -");
  CHECK(applied_json(read_file(f.log), "Job").find("train2.py") != std::string::npos);
  // A rebuilt image is a new run too.
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "oc delete") == 0);
  f.env.files["Dockerfile"] += "RUN pip install deepspeed\n";
  f.commit_plan();
  // The plan says so: the image is rebuilt and the run replaced, and nothing else.
  REQUIRE(f.planned.count(Action::Replace) == 1);
  CHECK(f.planned.count(Action::Update) == 1);
  CHECK(f.planned.count(Action::Delete) == 0);
  const Change& replaced =
      *std::find_if(f.planned.changes.begin(), f.planned.changes.end(),
                    [](const Change& c) { return c.action == Action::Replace; });
  CHECK(replaced.address == "barcelona/ml-dev-env/Job/trainer");
  CHECK(replaced.reason == "its image is rebuilt: the Dockerfile changed");
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "oc delete jobs.batch") == 1);
  CHECK(count(f.commands(), "oc delete") == 1);
  CHECK(!applied_json(read_file(f.log), "Job").empty());
}

TEST_CASE("a run's ttl changes in place, and a run its ttl removed is not started again",
          "[apply]") {
  // Issue 30.6: ttlSecondsAfterFinished is mutable on a Job (kubernetes ValidateJobSpecUpdate
  // leaves it out of the immutable fields) and on a JobSet; the stand-in refuses any change of
  // the pod template, so an update in place must not touch it.
  ApplyFixture f;
  make_run(f);
  setenv("MLENV_FAKE_STATE", (f.dir.path() + "/.fake-state.json").c_str(), 1);
  std::string& body = object(f.env, "Job", "trainer").body;
  body.insert(body.find("  completionMode"), "  ttlSecondsAfterFinished: 3600\n");
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  body.replace(body.find("3600"), 4, "7200");
  f.commit_plan();
  CHECK(f.planned.count(Action::Replace) == 0);
  CHECK(f.planned.count(Action::Update) == 1);
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "oc delete") == 0);
  CHECK(count(f.commands(), "oc get jobs.batch trainer -n nccl-test --ignore-not-found -o name") ==
        1);
  CHECK(applied_json(read_file(f.log), "Job").find("\"ttlSecondsAfterFinished\":7200") !=
        std::string::npos);
  // Finished and removed by its ttl: the change is not applied, which would run it again.
  body.replace(body.find("7200"), 4, "60");
  f.commit_plan();
  f.reply({"get jobs.batch trainer|0|"}, true);
  REQUIRE(f.apply() == 0);
  CHECK(applied_json(read_file(f.log), "Job").empty());
  CHECK(f.out.find("trainer: gone (it finished and its ttl removed it)") != std::string::npos);
}

TEST_CASE("apply --wait polls the Job until Complete and exits 0", "[apply]") {
  ApplyFixture f;
  make_run(f);
  f.reply({"once:get job|0|", "once:get job|0|SuccessCriteriaMet"}, true);
  ApplyRequest request;
  request.steps.wait = true;
  request.poll_ms = 10;
  REQUIRE(f.apply(request) == 0);
  std::vector<std::string> commands = f.commands();
  CHECK(count(commands, kWaitJob) == 3);
  CHECK(f.out.find("Job/trainer: Complete\n") != std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env") != "");
}

TEST_CASE("apply --wait exits 3 when the run failed, after recording the apply", "[apply]") {
  ApplyFixture f;
  make_run(f);
  f.reply({"get job|0|FailureTarget Failed"}, true);
  ApplyRequest request;
  request.steps.wait = true;
  request.poll_ms = 10;
  CHECK(f.apply(request) == kExitRunFailed);
  CHECK(f.err.find("error[E0713]: run `barcelona/ml-dev-env/Job/trainer` failed") !=
        std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env") != "");
}

TEST_CASE("apply --wait stops when Pod Security refuses the run's pods, and says why", "[apply]") {
  // Under the namespace's `baseline` level, a root pod with IPC_LOCK is refused at creation:
  // the JobSet's child Job `trainer-node-0` only records FailedCreate events (message
  // `... violates PodSecurity "baseline:latest": ...`, k8s.io/pod-security-admission), gets no
  // pod and never ends. apply reads the events instead of waiting for its timeout.
  ApplyFixture f;
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/podman");
  make_kubernetes_run(f);
  write_file(
      f.dir.path() + "/.events",
      "other-node-0\tError creating: pods are forbidden: violates PodSecurity "
      "\"restricted:latest\"\ntrainer-node-0\tError creating: pods \"trainer-node-0-0-x\" is "
      "forbidden: violates PodSecurity \"baseline:latest\": non-default capabilities\n");
  f.reply({"get jobset|0|", "get events|0|@" + f.dir.path() + "/.events"}, true);
  ApplyRequest request;
  request.steps.wait = true;
  request.poll_ms = 10;
  CHECK(f.apply(request) == kExitRunFailed);
  CHECK(f.err.find("error[E0713]: run `barcelona/ml-dev-env/JobSet/trainer` cannot start: its "
                   "pods are refused: Error creating: pods \"trainer-node-0-0-x\" is forbidden: "
                   "violates PodSecurity \"baseline:latest\"") != std::string::npos);
  CHECK(f.err.find(
            "kubectl label namespace nccl-test pod-security.kubernetes.io/enforce=privileged") !=
        std::string::npos);
  CHECK(count(f.commands(),
              "kubectl get events -n nccl-test --field-selector "
              "reason=FailedCreate,involvedObject.kind=Job") == 1);
}

TEST_CASE("apply stops a StatefulSet's rollout when Pod Security refuses its pods", "[apply]") {
  // The StatefulSet controller records a refused pod as a FailedCreate event on the StatefulSet,
  // `create Pod <pod> in StatefulSet <set> failed error: ...` (kubernetes
  // pkg/controller/statefulset/stateful_pod_control.go, recordPodEvent), and Pod Security's
  // error says `violates PodSecurity "<level>:<version>"` (k8s.io/pod-security-admission).
  // `rollout status` would wait for ready pods until --timeout; apply ends it after a round and
  // reads the events. An event of another StatefulSet whose name starts alike is not this one's.
  ApplyFixture f;
  // `rollout status` never ends by itself. The bound below is far from both the sleep and an
  // ended round, so it judges what apply did (end the round), not the machine's speed.
  setenv("MLENV_FAKE_SLEEP", "600", 1);
  write_file(
      f.dir.path() + "/.events",
      "ml-dev-env-old\tcreate Pod ml-dev-env-old-0 in StatefulSet ml-dev-env-old failed "
      "error: violates PodSecurity \"restricted:latest\"\nml-dev-env\tcreate Pod "
      "ml-dev-env-0 in StatefulSet ml-dev-env failed error: pods \"ml-dev-env-0\" is "
      "forbidden: violates PodSecurity \"baseline:latest\": non-default capabilities "
      "(container \"main\" must not include \"IPC_LOCK\" in securityContext.capabilities.add)\n");
  f.reply({"get events|0|@" + f.dir.path() + "/.events"}, true);
  ApplyRequest request;
  request.poll_ms = 1000;
  auto start = std::chrono::steady_clock::now();
  CHECK(f.apply(request) == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(300));
  CHECK(f.err.find("error[E0713]: `barcelona/ml-dev-env/StatefulSet/ml-dev-env` cannot start: "
                   "its pods are refused: create Pod ml-dev-env-0 in StatefulSet ml-dev-env "
                   "failed error: pods \"ml-dev-env-0\" is forbidden: violates PodSecurity "
                   "\"baseline:latest\"") != std::string::npos);
  CHECK(f.err.find("kubectl label namespace nccl-test "
                   "pod-security.kubernetes.io/enforce=privileged") != std::string::npos);
  std::vector<std::string> commands = f.commands();
  CHECK(count(commands, "oc rollout status statefulset/ml-dev-env -n nccl-test --timeout=30m") ==
        1);
  CHECK(count(commands,
              "oc get events -n nccl-test --field-selector "
              "reason=FailedCreate,involvedObject.kind=StatefulSet") == 1);
  // The env was recorded before the wait (its Route too is on the cluster); the refusal is the
  // last thing apply read.
  CHECK(commands.back().starts_with("oc get events"));
  CHECK(!applied_json(read_file(f.log), "Route").empty());
  CHECK(!rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
}

TEST_CASE("apply sends no RDMA pods to a namespace whose Pod Security level refuses them",
          "[apply]") {
  // Baseline admits only its own capabilities (k8s.io/pod-security-admission
  // policy/check_capabilities_baseline.go): a container adding IPC_LOCK is refused. apply reads
  // the namespace's enforce label first and sends nothing, naming the level, the env and the
  // label to set.
  ApplyFixture f;
  std::string& body = object(f.env, "StatefulSet", "ml-dev-env").body;
  body.insert(body.find("        env:"),
              "        securityContext:\n          capabilities:\n            add: [IPC_LOCK]\n");
  f.commit_plan();
  const std::string read_level =
      "oc get namespace nccl-test -o "
      "jsonpath={.metadata.labels.pod-security\\.kubernetes\\.io/enforce}";
  f.reply({"jsonpath={.metadata.labels.pod-security|0|baseline"}, true);
  CHECK(f.apply() == 1);
  CHECK(count(f.commands(), read_level) == 1);
  CHECK(count(f.commands(), "oc apply") == 0);
  CHECK(f.err.find("error[E0713]: the pods of `barcelona/ml-dev-env/StatefulSet/ml-dev-env` need "
                   "Pod Security level `privileged`, and namespace `nccl-test` enforces "
                   "`baseline`") != std::string::npos);
  CHECK(f.err.find("container `main` adds the capability IPC_LOCK, which `baseline` refuses") !=
        std::string::npos);
  CHECK(f.err.find("kubectl label namespace nccl-test "
                   "pod-security.kubernetes.io/enforce=privileged") != std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
  // Labelled privileged (or not labelled: the cluster's default, which apply cannot read).
  f.reply({"jsonpath={.metadata.labels.pod-security|0|privileged"}, true);
  CHECK(f.apply() == 0);
}

TEST_CASE("a rollout whose pods are not refused waits in rounds until --timeout", "[apply]") {
  // Another FailedCreate (a quota) is no refusal by Pod Security: apply keeps waiting, one
  // round of `rollout status` after another, and gives up at --timeout as before (E0707).
  ApplyFixture f;
  setenv("MLENV_FAKE_SLEEP", "600", 1);  // --timeout, not the round's end, stops the wait
  f.reply({"get events|0|ml-dev-env\tcreate Pod ml-dev-env-0 in StatefulSet ml-dev-env failed "
           "error: exceeded quota"},
          true);
  ApplyRequest request;
  request.poll_ms = 1000;
  request.steps.timeout = "3s";
  auto start = std::chrono::steady_clock::now();
  CHECK(f.apply(request) == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(300));
  CHECK(f.err.find("error[E0707]: `rollout status statefulset/ml-dev-env -n nccl-test "
                   "--timeout=3s` did not finish within 3s") != std::string::npos);
  CHECK(f.err.find("E0713") == std::string::npos);
  std::vector<std::string> commands = f.commands();
  CHECK(count(commands, "oc rollout status statefulset/ml-dev-env") >= 2);
  CHECK(count(commands, "oc get events") >= 1);
  CHECK(!rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
}

TEST_CASE("apply --wait says where Kueue holds a queued run when it gives up", "[apply]") {
  // Issue 30.5: Kueue keeps a queued JobSet suspended until its Workload is admitted; the
  // Workload's QuotaReserved condition says why not (kueue apis/kueue/v1beta1
  // workload_types.go). A wait that ends unfinished names the queue and Kueue's reason, not
  // only a timeout.
  ApplyFixture f;
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/podman");
  make_kubernetes_run(f);
  object(f.env, "JobSet", "trainer")
      .body.insert(0, "  labels:\n    kueue.x-k8s.io/queue-name: team-a\n");
  f.commit_plan();
  f.reply({"get jobset|0|",
           "get workloads.kueue.x-k8s.io|0|team-a\tFalse\tPending\tcouldn't assign flavors to pod "
           "set "
           "node: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"},
          true);
  ApplyRequest request;
  request.steps.wait = true;
  request.steps.timeout = "1s";
  request.poll_ms = 100;
  CHECK(f.apply(request) == 1);
  CHECK(f.err.find("error[E0707]: `JobSet/trainer` did not finish within 1s") != std::string::npos);
  CHECK(f.err.find("queued in `team-a`: Pending: couldn't assign flavors to pod set node: "
                   "insufficient unused quota") != std::string::npos);
  CHECK(f.out.find("JobSet/trainer: queued in `team-a`: Pending") != std::string::npos);
}

TEST_CASE("a failed JobSet's E0713 names its pods by the JobSet's label", "[apply]") {
  ApplyFixture f;
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/podman");
  make_kubernetes_run(f);
  f.reply({"get jobset|0|Failed"}, true);
  ApplyRequest request;
  request.steps.wait = true;
  request.poll_ms = 10;
  CHECK(f.apply(request) == kExitRunFailed);
  // The JobSet's child Job is `trainer-node-0`: `job-name=trainer` would find no pod.
  CHECK(f.err.find("error[E0713]: run `barcelona/ml-dev-env/JobSet/trainer` failed\n") !=
        std::string::npos);
  CHECK(f.err.find("= read its logs: `kubectl logs -n nccl-test -l "
                   "jobset.sigs.k8s.io/jobset-name=trainer --prefix`") != std::string::npos);
}

TEST_CASE("apply --wait gives up at --timeout", "[apply]") {
  ApplyFixture f;
  make_run(f);
  f.reply({"get job|0|"}, true);
  ApplyRequest request;
  request.steps.wait = true;
  request.steps.timeout = "1s";
  request.poll_ms = 100;
  CHECK(f.apply(request) == 1);
  CHECK(f.err.find("error[E0707]: `Job/trainer` did not finish within 1s") != std::string::npos);
  // The Job is on the cluster: the apply is recorded before the wait.
  CHECK(!rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env").empty());
}

TEST_CASE("a wait that times out leaves the record: status, plan, apply and destroy follow it",
          "[apply]") {
  // Issue 30.1. The stand-in holds the cluster's objects and refuses a change of a Job's pod
  // template as the API server does (fake_api.py); each build makes a new digest. The timed-out
  // run is applied, not ready; the next apply resumes: nothing is built, the Job is not applied
  // again (with another digest the API server would refuse it).
  ApplyFixture f;
  make_run(f);
  setenv("MLENV_FAKE_STATE", (f.dir.path() + "/.fake-state.json").c_str(), 1);
  setenv("MLENV_FAKE_BUILDS", (f.dir.path() + "/.builds").c_str(), 1);
  f.reply({"get namespace|0|namespace/nccl-test", "auth can-i|0|yes", "get job|0|",
           "get pods|0|{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}"});
  ApplyRequest request;
  request.steps.wait = true;
  // Every client call is bounded by --timeout too: the stand-in's API server must answer within.
  request.steps.timeout = "5s";
  request.poll_ms = 100;
  CHECK(f.apply(request) == 1);
  CHECK(f.err.find("error[E0707]: `Job/trainer` did not finish within 5s") != std::string::npos);
  CHECK(f.out.find("barcelona/ml-dev-env is applied, not ready: `Job/trainer`") !=
        std::string::npos);
  CHECK(show(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env", "plan.json") ==
        show(f.dir.path(), "HEAD", "plans/barcelona/ml-dev-env/plan.json"));
  {
    ChangeDir in(f.dir.path());
    std::ostringstream out;
    Diagnostics diagnostics;
    day2::show_status({"ml-dev-env", "", 60}, out, diagnostics);
    CHECK(out.str().starts_with("barcelona/ml-dev-env (namespace nccl-test"));
    for (const Diagnostic& d : diagnostics.all()) CHECK(d.code != Code::E0750);
  }
  f.commit_plan();
  CHECK(f.planned.empty());
  REQUIRE(f.apply(request) == 0);
  CHECK(count(f.commands(), "oc start-build") == 0);
  CHECK(applied_json(read_file(f.log), "Job").empty());
  ChangeDir in(f.dir.path());
  DestroyRequest destroy;
  destroy.env = "ml-dev-env";
  std::ostringstream out;
  Diagnostics diagnostics;
  CHECK(destroy_env(destroy, out, diagnostics) == 0);
  CHECK(read_file(f.dir.path() + "/.fake-state.json").find("Job/nccl-test/trainer") ==
        std::string::npos);
}

TEST_CASE("apply --timeout bounds every client call, not only builds and rollouts", "[apply]") {
  ApplyFixture f;
  setenv("MLENV_FAKE_SLEEP", "600", 1);
  setenv("MLENV_FAKE_SLEEP_ON", "-f -", 1);  // a hung `apply -f -`, ended by --timeout
  ApplyRequest request;
  request.steps.timeout = "1s";
  auto start = std::chrono::steady_clock::now();
  CHECK(f.apply(request) == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(300));
  CHECK(f.err.find("error[E0707]: `apply --server-side --field-manager=mlenvc -n nccl-test -f -` "
                   "did not finish within 1s") != std::string::npos);
}

TEST_CASE("durations are validated", "[apply]") {
  CHECK(parse_duration("30m") == 1800);
  CHECK(parse_duration("1h30m") == 5400);
  CHECK(parse_duration("720h") == kMaxDurationSeconds);
  for (const char* bad :
       {"30x", "0s", "0h0m", "999999h", "99999999999999999999s", "30", "", "m", "721h", "-5s"}) {
    INFO(bad);
    CHECK(!parse_duration(bad));
  }
  ApplyFixture f;
  ApplyRequest request;
  request.steps.timeout = "999999h";
  CHECK(f.apply(request) == 1);
  CHECK(f.commands().empty());
  CHECK(f.err.find("error[E0714]: --timeout=999999h is not a duration") != std::string::npos);
}

TEST_CASE("ApplySet identities include the program", "[apply]") {
  // Two programs with an env of one name in one namespace get two ApplySets (KEP-3659 ids are
  // of the parent's name), so neither prunes the other's objects.
  ApplySetParent a = applyset_parent("ml-dev-env", "nccl-test", "team-a.mlenv");
  ApplySetParent b = applyset_parent("ml-dev-env", "nccl-test", "team-b.mlenv");
  CHECK(a.name.starts_with("applyset-ml-dev-env-"));
  CHECK(a.name.size() == std::string("applyset-ml-dev-env-").size() + 8);
  CHECK(a.id != b.id);
  // A renamed program: what the record applied is pruned through its old ApplySet, whose
  // parent then goes.
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  const std::string old_parent = applyset_parent("ml-dev-env", "nccl-test", "cluster.mlenv").name;
  const std::string old_id = applyset_parent("ml-dev-env", "nccl-test", "cluster.mlenv").id;
  CHECK(read_file(f.log).find("\"name\":\"" + old_parent + "\"") != std::string::npos);
  // plan refuses a committed env of another source (E0609): the old plan goes first.
  user_remove(f.dir.path(), "plans/barcelona/ml-dev-env", "git mv cluster.mlenv renamed.mlenv");
  f.env.source = "renamed.mlenv";
  f.env.inputs = {{"renamed.mlenv", "v1"}};
  f.env.objects.pop_back();  // the Route
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  std::vector<std::string> commands = f.commands();
  CHECK(count(commands,
              "oc delete routes.route.openshift.io -n nccl-test -l "
              "applyset.k8s.io/part-of=" +
                  old_id + " ") == 1);
  REQUIRE(commands.size() >= 2);  // then the rollout, waited for once the env is recorded
  CHECK(commands[commands.size() - 2] ==
        "oc delete configmap " + old_parent + " -n nccl-test --ignore-not-found --wait=true");
  const std::string new_id = applyset_parent("ml-dev-env", "nccl-test", "renamed.mlenv").id;
  CHECK(applied_json(read_file(f.log), "StatefulSet").find(new_id) != std::string::npos);
}

TEST_CASE("off OpenShift apply builds and pushes with the image builder, and waits for the JobSet",
          "[apply]") {
  ApplyFixture f;
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/podman");
  make_kubernetes_run(f);
  f.reply({"get jobset|0|Completed"}, true);
  ApplyRequest request;
  request.steps.wait = true;
  request.poll_ms = 10;
  REQUIRE(f.apply(request) == 0);
  std::vector<std::string> commands = f.commands();
  // plan.json's platform picks kubectl first; nothing needs oc.
  CHECK(count(commands, "oc ") == 0);
  auto build = std::find_if(commands.begin(), commands.end(),
                            [](const std::string& c) { return c.starts_with("podman build -f "); });
  REQUIRE(build != commands.end());
  // The context is the plan directory: the env's Dockerfile and `_runtime/`.
  CHECK(*build ==
        "podman build -f $TMP/plans/barcelona/ml-dev-env/Dockerfile -t "
        "registry.example.com/ml/trainer:v1 $TMP/plans");
  // podman writes the pushed manifest's digest to --digestfile (the stand-in does too).
  REQUIRE((build + 1)->starts_with("podman push --digestfile="));
  CHECK((build + 1)->ends_with(" registry.example.com/ml/trainer:v1"));
  // The image is pushed before the JobSet that runs it is applied.
  auto jobset = std::find_if(commands.begin(), commands.end(), [](const std::string& c) {
    return c.starts_with("kubectl get jobset trainer");
  });
  REQUIRE(jobset != commands.end());
  CHECK(build < jobset);
  // JobSetConditionType Completed ends the wait (jobset.x-k8s.io/v1alpha2).
  CHECK(f.out.find("JobSet/trainer: Complete\n") != std::string::npos);
  // The same plan again pushes nothing and leaves the finished run alone.
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "podman") == 0);
  CHECK(applied_json(read_file(f.log), "JobSet").empty());
  // A changed run is a new run: the old JobSet and its pods go first.
  std::string& body = object(f.env, "JobSet", "trainer").body;
  body.replace(body.find("trainer:v1"), 10, "trainer:v2");
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "kubectl delete jobsets.jobset.x-k8s.io -n nccl-test") == 1);
}

// kubelet pulls an image with imagePullPolicy IfNotPresent only when the node has none of that
// name (kubernetes pkg/kubelet/images/image_manager.go, shouldPullImage): a tag pushed again is
// never pulled again on a node that ran it, and a StatefulSet whose spec is byte for byte the
// same rolls no pod. A digest names one image, so the workloads run the pushed digest.
constexpr const char* kPushed =
    "registry.example.com/ml/trainer@sha256:"
    "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";

TEST_CASE("off OpenShift the workloads run the pushed image by its digest", "[apply]") {
  ApplyFixture f;
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/podman");
  make_kubernetes_run(f);
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "podman build ") == 1);
  CHECK(count(f.commands(), "podman push ") == 1);
  const std::string applied = applied_json(read_file(f.log), "JobSet");
  CHECK(applied.find(image_field(kPushed)) != std::string::npos);
  CHECK(applied.find("trainer:v1") == std::string::npos);
  // The record keeps the digest: an apply that rebuilds nothing runs the same image.
  const std::string record = message(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env");
  CHECK(record.find(std::string("Image-Digest: ") + kPushed + "\n") != std::string::npos);

  // A changed Dockerfile: the plan says the image is rebuilt and the run replaced, and apply
  // builds, pushes and runs the new digest, exactly once.
  f.env.files["Dockerfile"] += "RUN pip install numpy\n";
  f.commit_plan();
  auto rebuilt = std::find_if(f.planned.changes.begin(), f.planned.changes.end(),
                              [](const Change& c) { return c.kind == "Image"; });
  REQUIRE(rebuilt != f.planned.changes.end());
  CHECK(rebuilt->address == "barcelona/_shared/Image/trainer");
  CHECK(rebuilt->action == Action::Update);
  REQUIRE(rebuilt->notes.size() == 1);
  CHECK(rebuilt->notes[0] ==
        "rebuild image registry.example.com/ml/trainer:v1: the Dockerfile changed");
  setenv("MLENV_FAKE_DIGEST", "1111111111111111111111111111111111111111111111111111111111111111",
         1);
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "podman build ") == 1);
  CHECK(count(f.commands(), "podman push ") == 1);
  CHECK(count(f.commands(), "kubectl delete jobsets.jobset.x-k8s.io -n nccl-test") == 1);
  CHECK(
      applied_json(read_file(f.log), "JobSet")
          .find(
              "trainer@sha256:1111111111111111111111111111111111111111111111111111111111111111") !=
      std::string::npos);
}

TEST_CASE("a dev env runs its pushed image by digest, kept until the image is rebuilt", "[apply]") {
  ApplyFixture f;
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/podman");
  make_kubernetes_dev(f);
  REQUIRE(f.apply() == 0);
  CHECK(applied_json(read_file(f.log), "StatefulSet").find(image_field(kPushed)) !=
        std::string::npos);
  // An unchanged image: no build, no push, and the StatefulSet keeps the recorded digest (the
  // tag would roll its pods back to whatever the node cached).
  object(f.env, "ConfigMap", "ml-dev-env-boot").body += "  other: x\n";
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "podman") == 0);
  CHECK(applied_json(read_file(f.log), "StatefulSet").find(image_field(kPushed)) !=
        std::string::npos);
  // A rebuilt image rolls the pods: the plan says so, apply pushes once and applies the new
  // digest.
  f.env.files["Dockerfile"] += "RUN pip install numpy\n";
  f.commit_plan();
  auto rolled = std::find_if(f.planned.changes.begin(), f.planned.changes.end(),
                             [](const Change& c) { return c.kind == "StatefulSet"; });
  REQUIRE(rolled != f.planned.changes.end());
  CHECK(rolled->action == Action::Update);
  CHECK(std::find(rolled->notes.begin(), rolled->notes.end(),
                  "rolls the pods: its image is rebuilt") != rolled->notes.end());
  setenv("MLENV_FAKE_DIGEST", "2222222222222222222222222222222222222222222222222222222222222222",
         1);
  REQUIRE(f.apply() == 0);
  CHECK(count(f.commands(), "podman push ") == 1);
  CHECK(
      applied_json(read_file(f.log), "StatefulSet")
          .find(
              "trainer@sha256:2222222222222222222222222222222222222222222222222222222222222222") !=
      std::string::npos);
}

TEST_CASE("a push that reports no digest stops apply before any workload", "[apply]") {
  ApplyFixture f;
  // docker prints the digest instead of writing a file; this one prints none.
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/docker");
  const std::string saved = getenv("PATH");
  setenv("PATH", (f.dir.path() + "/.bin:/usr/bin:/bin").c_str(), 1);
  make_kubernetes_run(f);
  const int status = f.apply();
  setenv("PATH", saved.c_str(), 1);
  CHECK(status == 1);
  CHECK(f.err.find("error[E0712]: `push registry.example.com/ml/trainer:v1` printed no image "
                   "digest") != std::string::npos);
  CHECK(applied_json(read_file(f.log), "JobSet").empty());
}

TEST_CASE("without podman, buildah or docker apply prints the image build to run", "[apply]") {
  ApplyFixture f;
  make_kubernetes_run(f);
  const std::string saved = getenv("PATH");
  setenv("PATH", (f.dir.path() + "/.bin").c_str(), 1);  // the stand-ins only
  const int status = f.apply();
  setenv("PATH", saved.c_str(), 1);
  REQUIRE(status == 0);
  CHECK(f.out.find("$ podman build -f ") != std::string::npos);
  CHECK(f.out.find("(no podman, buildah or docker on PATH: run it where one is)") !=
        std::string::npos);
  CHECK(count(f.commands(), "podman") == 0);
}

// The servers `oc whoami --show-server` and `kubectl config view --minify -o
// jsonpath={.clusters[0].cluster.server}` print are the kubeconfig's `server` URLs
// (https://kubernetes.io/docs/reference/config-api/kubeconfig.v1/#Cluster).
TEST_CASE("the host of a client's server URL is what a cluster's api names", "[apply]") {
  CHECK(server_host("https://api.barcelona.example.com:6443\n") == "api.barcelona.example.com");
  CHECK(server_host("https://API.Barcelona.example.com") == "api.barcelona.example.com");
  CHECK(server_host("https://10.0.0.5:6443/") == "10.0.0.5");
  CHECK(server_host("https://[fd00::1]:6443") == "fd00::1");
  CHECK(server_host("https://user@api.x.example.com:6443/path?x") == "api.x.example.com");
  CHECK(server_host("api.x.example.com:6443") == "api.x.example.com");
  CHECK(server_host("") == "");
}

TEST_CASE("a kubeconfig context name is one argument that cannot be an option", "[apply]") {
  CHECK(valid_context_name("admin@barcelona"));
  CHECK(valid_context_name("default/api-crc-testing:6443/kubeadmin"));  // oc login's names
  CHECK(!valid_context_name(""));
  CHECK(!valid_context_name("-n"));
  CHECK(!valid_context_name("--kubeconfig=/tmp/x"));
  CHECK(!valid_context_name("a b"));
  CHECK(!valid_context_name("a\nb"));
  CHECK(!valid_context_name(std::string(254, 'a')));
}

TEST_CASE("apply refuses, before any change, a client pointed at another cluster", "[apply]") {
  ApplyFixture f;
  f.env.more_keys = {"\"api\": \"api.barcelona.example.com\""};
  f.commit_plan();
  setenv("MLENV_FAKE_SERVER", "https://api.staging.example.com:6443", 1);
  CHECK(f.apply() == 1);
  CHECK(f.commands() == std::vector<std::string>{"oc whoami --show-server"});
  CHECK(f.err.find("error[E0719]: the client's current server is `api.staging.example.com`, "
                   "not `api.barcelona.example.com`, the `api` of the cluster of "
                   "`barcelona/ml-dev-env`") != std::string::npos);

  // The cluster's own server: apply goes on, the check first.
  setenv("MLENV_FAKE_SERVER", "https://api.barcelona.example.com:6443", 1);
  REQUIRE(f.apply() == 0);
  CHECK(f.commands().front() == "oc whoami --show-server");
  CHECK(f.commands().size() > 1);
}

TEST_CASE("kubectl's current server is its kubeconfig's, for the context --context names",
          "[apply]") {
  ApplyFixture f;
  f.env.platform = "kubernetes";
  setenv("MLENV_FAKE_API", "kubernetes", 1);
  f.env.more_keys = {"\"api\": \"api.example.com\""};
  f.commit_plan();
  ApplyRequest request;
  request.context = "admin@lab";
  REQUIRE(f.apply(request) == 0);
  std::vector<std::string> commands = f.commands();
  REQUIRE(!commands.empty());
  CHECK(commands.front() ==
        "kubectl --context=admin@lab config view --minify -o "
        "jsonpath={.clusters[0].cluster.server}");
  // Every call names the context, as its first argument.
  for (const std::string& command : commands)
    CHECK((command.starts_with("kubectl --context=admin@lab ") ||
           command.starts_with("oc --context=admin@lab ")));
}

TEST_CASE("destroy refuses a client pointed at another cluster than the record's", "[apply]") {
  ApplyFixture f;
  f.env.more_keys = {"\"api\": \"api.barcelona.example.com\""};
  f.commit_plan();
  setenv("MLENV_FAKE_SERVER", "https://api.barcelona.example.com:6443", 1);
  REQUIRE(f.apply() == 0);
  setenv("MLENV_FAKE_SERVER", "https://api.staging.example.com", 1);
  ChangeDir in(f.dir.path());
  write_file(f.log, "");
  DestroyRequest request;
  request.env = "ml-dev-env";
  std::ostringstream out;
  Diagnostics diagnostics;
  CHECK(destroy_env(request, out, diagnostics) == 1);
  CHECK(f.commands() == std::vector<std::string>{"oc whoami --show-server"});
  REQUIRE(diagnostics.all().size() == 1);
  CHECK(diagnostics.all()[0].code == Code::E0719);
}

TEST_CASE("a plan written before plan.json held api is applied without the check", "[apply]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  for (const std::string& command : f.commands())
    CHECK(command.find("whoami") == std::string::npos);
}

}  // namespace
}  // namespace mlenv::plan
