// Envs leaving the cluster, against the recording stand-in for oc/kubectl: apply of a plan from
// which an env was removed, and `mlenvc destroy ENV`. Each asserts the exact client calls.

#include <catch2/catch.hpp>

#include <set>

#include "compiler/apply/applyset.h"
#include "compiler/apply/destroy.h"
#include "compiler/plan/change.h"
#include "compiler/plan/differ.h"
#include "compiler/plan/summary.h"
#include "compiler/plan/summary_markdown.h"
#include "tests/plan/apply_fixture.h"

namespace mlenv::plan {
namespace {

using namespace testing;

// The deletes apply runs for the typical env `name`, in reverse apply order, then its Secret
// and ApplySet parent. The SCC is an admin object: only `apply --admin` deletes it.
std::vector<std::string> typical_deletes(const std::string& name) {
  const ApplySetParent parent = applyset_parent(name, "nccl-test", "cluster.mlenv");
  auto owned = [&](const std::string& resource, const std::string& object) {
    return "oc delete " + resource + " -n nccl-test -l applyset.k8s.io/part-of=" + parent.id +
           " --field-selector metadata.name=" + object + " --ignore-not-found --wait=true";
  };
  return {owned("routes.route.openshift.io", name + "-jupyter"),
          owned("statefulsets.apps", name),
          owned("services", name + "-headless"),
          owned("buildconfigs.build.openshift.io", name),
          owned("imagestreams.image.openshift.io", name),
          owned("configmaps", name + "-boot"),
          owned("persistentvolumeclaims", "workspace"),
          owned("serviceaccounts", name + "-sa"),
          "oc delete secret " + name + "-oauth-cookie -n nccl-test --ignore-not-found --wait=true",
          "oc delete configmap " + parent.name + " -n nccl-test --ignore-not-found --wait=true"};
}

std::vector<std::string> tail(const std::vector<std::string>& commands, std::size_t n) {
  if (commands.size() < n) return commands;
  return {commands.end() - static_cast<std::ptrdiff_t>(n), commands.end()};
}

bool contains_delete(const std::vector<std::string>& commands) {
  return std::any_of(commands.begin(), commands.end(),
                     [](const std::string& c) { return c.starts_with("oc delete"); });
}

std::size_t count_if_contains(const std::vector<std::string>& commands, const std::string& part) {
  return static_cast<std::size_t>(
      std::count_if(commands.begin(), commands.end(),
                    [&](const std::string& c) { return c.find(part) != std::string::npos; }));
}

// Runs `mlenvc destroy` from the fixture's repository, like ApplyFixture::apply.
int destroy(ApplyFixture& f, DestroyRequest request) {
  ChangeDir in(f.dir.path());
  write_file(f.log, "");
  std::ostringstream out;
  Diagnostics diagnostics;
  int status = destroy_env(request, out, diagnostics);
  f.out = out.str();
  std::ostringstream err;
  SourceManager none;
  for (const Diagnostic& d : diagnostics.all()) render_text(err, none, d);
  f.err = err.str();
  return status;
}

// Without its claim's delete: what apply or destroy runs when no --allow-destroy names it.
std::vector<std::string> keeping_claim(std::vector<std::string> deletes) {
  std::erase_if(deletes, [](const std::string& c) {
    return c.find("delete persistentvolumeclaims") != std::string::npos;
  });
  return deletes;
}

// Applies the typical env and bob, then commits a plan that bob left (with the program).
void apply_then_remove_bob(ApplyFixture& f) {
  f.others = {typical_env("bob")};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  f.others = {};
  f.commit_plan();
}

TEST_CASE("apply deletes an env removed from the plan and keeps its claim unless allowed",
          "[destroy]") {
  ApplyFixture f;
  apply_then_remove_bob(f);

  // Its workload and every other object go (the GPUs are free); its claim stays, with its
  // data, and apply names the flag that would delete it where the delete would be.
  REQUIRE(f.apply() == 0);
  std::vector<std::string> expected = keeping_claim(typical_deletes("bob"));
  CHECK(tail(f.commands(), expected.size()) == expected);
  CHECK(f.out.find("Destroying barcelona/bob, which left the plan in plans/barcelona/bob\n") !=
        std::string::npos);
  CHECK(f.out.find("Keeping PersistentVolumeClaim/workspace and its data; "
                   "--allow-destroy=barcelona/bob/PersistentVolumeClaim/workspace deletes it\n") !=
        std::string::npos);
  // The record says bob was destroyed: its tree is empty, its history kept.
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/bob^{tree}") ==
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
  CHECK(message(f.dir.path(), "refs/mlenv/applied/barcelona/bob")
            .starts_with("mlenvc destroy barcelona/bob\n"));
  CHECK(!rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/bob~1").empty());

  // The next apply has nothing left to destroy.
  REQUIRE(f.apply() == 0);
  CHECK(!contains_delete(f.commands()));
}

TEST_CASE("apply deletes a removed env's claim when --allow-destroy names it", "[destroy]") {
  ApplyFixture f;
  apply_then_remove_bob(f);
  ApplyRequest allowed;
  allowed.steps.allow_destroy = {"barcelona/bob/PersistentVolumeClaim/workspace"};
  REQUIRE(f.apply(allowed) == 0);
  std::vector<std::string> expected = typical_deletes("bob");
  CHECK(tail(f.commands(), expected.size()) == expected);
  CHECK(f.out.find("Keeping") == std::string::npos);
}

TEST_CASE("a dry run shows the deletes of a removed env and records nothing", "[destroy]") {
  ApplyFixture f;
  f.others = {typical_env("bob")};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  const std::string record = rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/bob");
  f.others = {};
  f.commit_plan();
  ApplyRequest dry;
  dry.dry_run = true;
  dry.steps.allow_destroy = {"barcelona/bob/PersistentVolumeClaim/workspace"};
  REQUIRE(f.apply(dry) == 0);
  CHECK(f.commands().empty());
  CHECK(f.out.find("Would destroy barcelona/bob") != std::string::npos);
  CHECK(f.out.find("/.bin/oc delete persistentvolumeclaims -n nccl-test") != std::string::npos);
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/bob") == record);
}

TEST_CASE("apply of one env directory destroys no env outside it", "[destroy]") {
  ApplyFixture f;
  f.others = {typical_env("bob")};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  f.others = {};
  f.commit_plan();
  ApplyRequest one;
  one.plan_dirs = {"plans/barcelona/ml-dev-env"};
  REQUIRE(f.apply(one) == 0);
  CHECK(!contains_delete(f.commands()));
}

TEST_CASE("a removed env leaves a shared object to the env that keeps it", "[destroy]") {
  ApplyFixture f;
  FakeObject nad{"k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "rail1",
                 "spec:\n  config: '{}'\n", 2};
  nad.shared = true;
  f.env.objects.insert(f.env.objects.begin() + 2, nad);
  FakeEnv bob = typical_env("bob");
  bob.objects.insert(bob.objects.begin() + 2, nad);
  f.others = {bob};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  f.others = {};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  for (const std::string& command : f.commands())
    CHECK(command.find("network-attachment-definitions") == std::string::npos);
  CHECK(tail(f.commands(), 9) == keeping_claim(typical_deletes("bob")));
}

// The `--allow-destroy=...` flags the hints of E0704 name in `err`.
std::set<std::string> refused_flags(const std::string& err) {
  std::set<std::string> out;
  const std::string hint = "= pass ";
  for (std::size_t at = err.find(hint); at != std::string::npos; at = err.find(hint, at + 1)) {
    const std::size_t start = at + hint.size();
    out.insert(err.substr(start, err.find(' ', start) - start));
  }
  return out;
}

TEST_CASE("the plan marks exactly the objects apply refuses to delete or keeps without the flag",
          "[destroy]") {
  ApplyFixture f;
  // Every kind apply protects (the typical env has a claim and the platform team's SCC) and
  // kinds it does not (ConfigMap, Route, ...).
  f.env.objects.push_back({"v1", "PersistentVolume", "scratch", "spec: {}\n", 3});
  f.env.objects.push_back({"v1", "Namespace", "extra", "", 0});
  f.env.objects.push_back({"security.openshift.io/v1", "SecurityContextConstraints", "own",
                           "allowPrivilegedContainer: false\n", 0});
  f.env.objects.push_back(
      {"rbac.authorization.k8s.io/v1", "Role", "use-scc", "rules: []\n", 0, true});
  FakeObject nad{"k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "rail1",
                 "spec:\n  config: '{}'\n", 2};
  nad.shared = true;
  f.env.objects.push_back(nad);
  FakeEnv bob;  // stays in the plan, with nothing apply protects
  bob.env = "bob";
  bob.objects = {{"v1", "ConfigMap", "bob-boot", "data: {}\n", 4}};
  f.others = {bob};
  f.commit_plan();
  ApplyRequest admin;
  admin.steps.admin = true;
  REQUIRE(f.apply() == 0);
  REQUIRE(f.apply(admin) == 0);

  // The env leaves the program: what the plan marks, flag for flag.
  std::set<std::string> marked;
  std::set<std::string> kept;
  {
    ChangeDir in(f.dir.path());
    Diagnostics diagnostics;
    auto session = PlanSession::open("", diagnostics);
    auto diff = session->diff(tree_from_output(render({bob})), f.env.source, diagnostics);
    REQUIRE(diff);
    for (const Change& change : diff->changes) {
      if (required_flag(change).empty()) continue;
      (change.action == Action::Keep ? kept : marked).insert(required_flag(change));
    }
    // The pull request's comment names each flag too.
    std::ostringstream markdown;
    render_summary_markdown(markdown, *diff, {"cluster.mlenv", {}, {}, ""});
    for (const std::string& flag : marked)
      CHECK(markdown.str().find(": apply needs `" + flag + "`\n") != std::string::npos);
    CHECK(markdown.str().find(
              "- `barcelona/ml-dev-env/PersistentVolumeClaim/workspace` is kept with its data; "
              "`--allow-destroy=barcelona/ml-dev-env/PersistentVolumeClaim/workspace` deletes "
              "it\n") != std::string::npos);
    CHECK(markdown.str().find(", 2 to keep.**") != std::string::npos);
    CHECK(markdown.str().find(
              "- :warning: `barcelona/_admin/SecurityContextConstraints/mlenvc-rdma` belongs to "
              "the platform team (`_admin`): apply needs "
              "`--allow-destroy=barcelona/_admin/SecurityContextConstraints/mlenvc-rdma`\n") !=
          std::string::npos);
    CHECK(markdown.str().find(
              "- :warning: `barcelona/ml-dev-env/SecurityContextConstraints/own` grants pods "
              "their privileges: apply needs "
              "`--allow-destroy=barcelona/ml-dev-env/SecurityContextConstraints/own`\n") !=
          std::string::npos);
    REQUIRE(session->commit("plan\n", diagnostics));
    session->write_worktree(true, diagnostics);
  }
  CHECK(marked == std::set<std::string>{
                      "--allow-destroy=barcelona/_admin/Role/use-scc",
                      "--allow-destroy=barcelona/_admin/SecurityContextConstraints/mlenvc-rdma",
                      "--allow-destroy=barcelona/ml-dev-env/Namespace/extra",
                      "--allow-destroy=barcelona/ml-dev-env/PersistentVolume/scratch",
                      "--allow-destroy=barcelona/ml-dev-env/SecurityContextConstraints/own"});
  // The env's claim is kept, not refused, and so is the cluster's attachment its last env
  // held (issue 30.3: freeing GPUs never deletes the cluster's own): the plan says so with the
  // flag that deletes each.
  CHECK(kept == std::set<std::string>{
                    "--allow-destroy=barcelona/_shared/NetworkAttachmentDefinition/rail1",
                    "--allow-destroy=barcelona/ml-dev-env/PersistentVolumeClaim/workspace"});

  // What apply and apply --admin refuse (E0704), each naming the flag it needs.
  auto only_bob = [&](const std::string&, Diagnostics&) { return std::optional(render({bob})); };
  ApplyRequest plain;
  plain.render = only_bob;
  admin.render = only_bob;
  CHECK(f.apply(plain) == 1);
  std::set<std::string> refused = refused_flags(f.err);
  CHECK(f.apply(admin) == 1);
  refused.merge(refused_flags(f.err));
  CHECK(f.commands().empty());
  CHECK(refused == marked);
  CHECK(f.out.find("Keeping PersistentVolumeClaim/workspace and its data; "
                   "--allow-destroy=barcelona/ml-dev-env/PersistentVolumeClaim/workspace") ==
        std::string::npos);  // refused before anything ran
}

TEST_CASE("destroy ENV deletes an applied env on purpose", "[destroy]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);

  DestroyRequest request;
  request.env = "ml-dev-env";
  request.steps.allow_destroy = {"barcelona/ml-dev-env/PersistentVolumeClaim/workspace"};
  request.dry_run = true;
  REQUIRE(destroy(f, request) == 0);
  CHECK(f.commands().empty());
  CHECK(f.out.starts_with("Would destroy barcelona/ml-dev-env\n$ " + f.dir.path() +
                          "/.bin/oc delete routes.route.openshift.io "));

  request.dry_run = false;
  request.env = "barcelona/ml-dev-env";
  REQUIRE(destroy(f, request) == 0);
  CHECK(f.commands() == typical_deletes("ml-dev-env"));
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env^{tree}") ==
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904");

  // Destroyed: there is no applied record left to destroy.
  CHECK(destroy(f, request) == 1);
  CHECK(f.err.find("error[E0718]: `barcelona/ml-dev-env` has no applied record to destroy") !=
        std::string::npos);
}

TEST_CASE("destroy ENV frees the GPUs and keeps the env's claim unless allowed", "[destroy]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  DestroyRequest request;
  request.env = "ml-dev-env";
  REQUIRE(destroy(f, request) == 0);
  CHECK(f.commands() == keeping_claim(typical_deletes("ml-dev-env")));
  CHECK(f.out ==
        "Destroying barcelona/ml-dev-env\n"
        "$ " +
            f.dir.path() + "/.bin/" + f.commands()[0] + "\n$ " + f.dir.path() + "/.bin/" +
            f.commands()[1] + "\n$ " + f.dir.path() + "/.bin/" + f.commands()[2] + "\n$ " +
            f.dir.path() + "/.bin/" + f.commands()[3] + "\n$ " + f.dir.path() + "/.bin/" +
            f.commands()[4] + "\n$ " + f.dir.path() + "/.bin/" + f.commands()[5] + "\n" +
            "Keeping PersistentVolumeClaim/workspace and its data; "
            "--allow-destroy=barcelona/ml-dev-env/PersistentVolumeClaim/workspace deletes it\n"
            "$ " +
            f.dir.path() + "/.bin/" + f.commands()[6] + "\n$ " + f.dir.path() + "/.bin/" +
            f.commands()[7] + "\n$ " + f.dir.path() + "/.bin/" + f.commands()[8] + "\n");
  CHECK(rev_parse(f.dir.path(), "refs/mlenv/applied/barcelona/ml-dev-env^{tree}") ==
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
}

TEST_CASE("destroy runs the plan's platform client, as apply does: kubectl first on Kubernetes",
          "[destroy]") {
  ApplyFixture f;
  f.env.platform = "kubernetes";
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  CHECK(f.commands().back().starts_with("kubectl rollout status "));
  DestroyRequest request;
  request.env = "ml-dev-env";
  request.steps.allow_destroy = {"barcelona/ml-dev-env/PersistentVolumeClaim/workspace"};
  REQUIRE(destroy(f, request) == 0);
  std::vector<std::string> expected = typical_deletes("ml-dev-env");
  for (std::string& command : expected) command.replace(0, 2, "kubectl");
  CHECK(f.commands() == expected);
}

// Per-pod storage: the typical env's StatefulSet with a claim template, as the target writes it
// for storage `per_pod`, with `replicas` pods.
void give_pods_claims(FakeEnv& env, int replicas) {
  std::string& body = object(env, "StatefulSet", env.env).body;
  body.replace(body.find("replicas: 2"), 11, "replicas: " + std::to_string(replicas));
  body +=
      "  persistentVolumeClaimRetentionPolicy:\n    whenDeleted: Retain\n    whenScaled: Retain\n"
      "  volumeClaimTemplates:\n  - metadata:\n      name: scratch\n    spec:\n"
      "      accessModes:\n      - ReadWriteOnce\n";
}

const std::string kClaim0 = "barcelona/ml-dev-env/PersistentVolumeClaim/scratch-ml-dev-env-0";
const std::string kClaim1 = "barcelona/ml-dev-env/PersistentVolumeClaim/scratch-ml-dev-env-1";
const std::string kWorkspace = "barcelona/ml-dev-env/PersistentVolumeClaim/workspace";

// The claims a StatefulSet's volumeClaimTemplates give its pods are named
// `<template>-<statefulset>-<ordinal>` and, with persistentVolumeClaimRetentionPolicy
// whenDeleted/whenScaled Retain, are "not affected" by the StatefulSet's deletion or a scale-down
// (https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#persistentvolumeclaim-retention;
// StatefulSetPersistentVolumeClaimRetentionPolicy in the apps/v1 API reference). No plan.json
// lists them, so the plan and apply name them from the StatefulSet.
TEST_CASE("the plan marks the claims a removed StatefulSet's pods leave, with the exact flag",
          "[destroy]") {
  FakeEnv env = typical_env();
  give_pods_claims(env, 2);
  PlanTree before = tree_from_output(render({env}));
  FakeEnv other = typical_env("bob");  // the env leaves; another stays
  PlanDiff diff = diff_plans(before, tree_from_output(render({other})));
  std::vector<const Change*> claims;
  for (const Change& change : diff.changes) {
    if (change.address.find("/PersistentVolumeClaim/scratch-") != std::string::npos)
      claims.push_back(&change);
  }
  REQUIRE(claims.size() == 2);
  CHECK(claims[0]->address == kClaim0);
  CHECK(claims[1]->address == kClaim1);
  CHECK(claims[1]->action == Action::Keep);
  CHECK(!claims[1]->destroys_data);
  CHECK(required_flag(*claims[1]) == "--allow-destroy=" + kClaim1);
  std::ostringstream text;
  render_change_text(text, *claims[1]);
  CHECK(text.str() == "  = " + kClaim1 +
                          "\n      # kept with its data; --allow-destroy=" + kClaim1 +
                          " deletes it\n      # a claim of StatefulSet/ml-dev-env's pods, which "
                          "deleting it leaves (whenDeleted: Retain)\n");
  std::ostringstream json;
  render_summary_json(json, diff);
  CHECK(json.str().find("{\"address\":\"" + kClaim1 +
                        "\",\"action\":\"keep\",\"reason\":\"\",\"file\":\"barcelona/"
                        "ml-dev-env/statefulset-ml-dev-env.yaml\",\"destroys_data\":false,"
                        "\"allow_destroy\":\"--allow-destroy=" +
                        kClaim1 + "\",") != std::string::npos);
  CHECK(json.str().find(",\"delete\":7,\"keep\":3") != std::string::npos);
  CHECK(summary_line(diff) ==
        "Plan: 9 to create, 0 to update, 0 to replace, 7 to delete, 3 to keep.");
}

TEST_CASE("the plan says which claims a scale-down leaves", "[destroy]") {
  FakeEnv env = typical_env();
  give_pods_claims(env, 4);
  PlanTree before = tree_from_output(render({env}));
  FakeEnv smaller = typical_env();
  give_pods_claims(smaller, 2);
  PlanDiff diff = diff_plans(before, tree_from_output(render({smaller})));
  REQUIRE(diff.changes.size() == 1);
  std::ostringstream text;
  render_change_text(text, diff.changes[0]);
  CHECK(text.str() ==
        "  ~ barcelona/ml-dev-env/StatefulSet/ml-dev-env\n"
        "      # scaling down from 4 to 2 pods leaves the claims scratch-ml-dev-env-2 and "
        "scratch-ml-dev-env-3 with their data (whenScaled: Retain); apply keeps them\n"
        "      ~ spec.replicas: 4 -> 2\n");
}

TEST_CASE("destroy deletes the claims of the StatefulSet's pods after it only when allowed",
          "[destroy]") {
  ApplyFixture f;
  give_pods_claims(f.env, 2);
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  const std::string sts_delete = typical_deletes("ml-dev-env")[1];
  REQUIRE(sts_delete.starts_with("oc delete statefulsets.apps "));

  // Not named: the claims are kept, and destroy says so where they would go.
  DestroyRequest request;
  request.env = "ml-dev-env";
  request.steps.allow_destroy = {kWorkspace};
  request.dry_run = true;
  REQUIRE(destroy(f, request) == 0);
  const std::string keep1 =
      "Keeping PersistentVolumeClaim/scratch-ml-dev-env-1 and its data (a claim of "
      "StatefulSet/ml-dev-env's pods); --allow-destroy=" +
      kClaim1 + " deletes it\n";
  const std::string keep0 =
      "Keeping PersistentVolumeClaim/scratch-ml-dev-env-0 and its data (a claim of "
      "StatefulSet/ml-dev-env's pods); --allow-destroy=" +
      kClaim0 + " deletes it\n";
  CHECK(f.out.find("/.bin/oc " + sts_delete.substr(3) + "\n" + keep1 + keep0 + "$ ") !=
        std::string::npos);

  // Named: deleted right after the StatefulSet, the last ordinal first.
  request.dry_run = false;
  request.steps.allow_destroy = {kWorkspace, kClaim0, kClaim1};
  REQUIRE(destroy(f, request) == 0);
  std::vector<std::string> expected = typical_deletes("ml-dev-env");
  expected.insert(expected.begin() + 2,
                  {"oc delete persistentvolumeclaims scratch-ml-dev-env-1 -n nccl-test "
                   "--ignore-not-found --wait=true",
                   "oc delete persistentvolumeclaims scratch-ml-dev-env-0 -n nccl-test "
                   "--ignore-not-found --wait=true"});
  CHECK(f.commands() == expected);
}

TEST_CASE("apply of a plan the env left keeps its pods' claims unless each is named", "[destroy]") {
  ApplyFixture f;
  FakeEnv bob = typical_env("bob");
  give_pods_claims(bob, 2);
  f.others = {bob};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  f.others = {};
  f.commit_plan();
  const std::string bob_claim0 = "barcelona/bob/PersistentVolumeClaim/scratch-bob-0";
  ApplyRequest request;
  request.steps.allow_destroy = {"barcelona/bob/PersistentVolumeClaim/workspace", bob_claim0};
  REQUIRE(f.apply(request) == 0);
  // Claim 1 is kept, claim 0 deleted right after the StatefulSet.
  std::vector<std::string> expected = typical_deletes("bob");
  expected.insert(expected.begin() + 2,
                  "oc delete persistentvolumeclaims scratch-bob-0 -n "
                  "nccl-test --ignore-not-found --wait=true");
  CHECK(tail(f.commands(), expected.size()) == expected);
  CHECK(count_if_contains(f.commands(), "scratch-bob-1") == 0);
  CHECK(f.out.find(" --wait=true\nKeeping PersistentVolumeClaim/scratch-bob-1 and its data (a "
                   "claim of StatefulSet/bob's pods); --allow-destroy=barcelona/bob/"
                   "PersistentVolumeClaim/scratch-bob-1 deletes it\n$ ") != std::string::npos);
}

TEST_CASE("destroy ENV keeps what another env of the cluster holds and names unknown envs",
          "[destroy]") {
  ApplyFixture f;
  FakeObject nad{"k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "rail1",
                 "spec:\n  config: '{}'\n", 2};
  nad.shared = true;
  f.env.objects.insert(f.env.objects.begin() + 2, nad);
  FakeEnv bob = typical_env("bob");
  bob.objects.insert(bob.objects.begin() + 2, nad);
  f.others = {bob};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  DestroyRequest request;
  request.env = "bob";
  request.steps.allow_destroy = {"barcelona/bob/PersistentVolumeClaim/workspace"};
  REQUIRE(destroy(f, request) == 0);
  CHECK(f.commands() == typical_deletes("bob"));

  request.env = "nobody";
  request.steps.allow_destroy = {};
  CHECK(destroy(f, request) == 1);
  CHECK(f.err.find("error[E0718]: `nobody` has no applied record to destroy") != std::string::npos);
}

}  // namespace
}  // namespace mlenv::plan
