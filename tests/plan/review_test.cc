// What a reviewer reads: shared objects once under their cluster and never deleted while an env
// keeps them, the Markdown summary for a pull request (a golden file), and the warning for a
// plan rendered from a source HEAD does not hold. Real git repositories in temporary dirs.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "compiler/diag/render.h"
#include "compiler/plan/plan_session.h"
#include "compiler/plan/summary.h"
#include "compiler/plan/summary_markdown.h"
#include "tests/plan/support.h"

namespace mlenv::plan {
namespace {

using namespace testing;

// An SR-IOV attachment as every env of the namespace plans it (`"shared": true`).
FakeObject shared_attachment() {
  FakeObject nad{"k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "rail1",
                 "spec:\n  config: '{}'\n", 2};
  nad.shared = true;
  return nad;
}

FakeEnv env_with_rail(const std::string& name) {
  FakeEnv env = typical_env(name);
  env.objects.insert(env.objects.begin() + 2, shared_attachment());
  return env;
}

// Diffs and commits `envs` as `mlenvc plan` does; the diff.
PlanDiff plan(const std::string& repo, const std::vector<FakeEnv>& envs) {
  ChangeDir in(repo);
  Diagnostics diagnostics;
  auto session = PlanSession::open("", diagnostics);
  REQUIRE(session);
  auto diff = session->diff(tree_from_output(render(envs)), "cluster.mlenv", diagnostics);
  REQUIRE(diff);
  if (!diff->empty()) REQUIRE(session->commit("plan\n", diagnostics));
  REQUIRE(session->write_worktree(!diff->empty(), diagnostics));
  return *diff;
}

std::vector<std::string> addresses(const PlanDiff& diff) {
  std::vector<std::string> out;
  for (const Change& change : diff.changes)
    out.push_back(std::string(action_name(change.action)) + " " + change.address);
  return out;
}

std::size_t count_kind(const PlanDiff& diff, const std::string& kind) {
  return static_cast<std::size_t>(std::count_if(diff.changes.begin(), diff.changes.end(),
                                                [&](const Change& c) { return c.kind == kind; }));
}

TEST_CASE("a shared object is shown once under its cluster, and kept while an env holds it",
          "[review]") {
  TempDir dir;
  init_repo(dir.path());
  PlanDiff first = plan(dir.path(), {env_with_rail("alice"), env_with_rail("bob")});
  CHECK(count_kind(first, "NetworkAttachmentDefinition") == 1);
  std::vector<std::string> created = addresses(first);
  CHECK(std::count(created.begin(), created.end(),
                   "create barcelona/_shared/NetworkAttachmentDefinition/rail1") == 1);
  // Every env directory still holds its copy: each is a kustomization of its own.
  CHECK(show(dir.path(), "HEAD", "plans/barcelona/bob/networkattachmentdefinition-rail1.yaml") !=
        "<missing>");

  // bob leaves; alice keeps the attachment: it is not shown as deleted.
  PlanDiff second = plan(dir.path(), {env_with_rail("alice")});
  CHECK(count_kind(second, "NetworkAttachmentDefinition") == 0);
  CHECK(second.count(Action::Delete) == 7);  // bob's own objects
  CHECK(second.count(Action::Keep) == 1);    // but its claim, which keeps its data

  // A change to the attachment is one update, whichever envs hold it.
  FakeEnv alice = env_with_rail("alice");
  FakeEnv carol = env_with_rail("carol");
  object(alice, "NetworkAttachmentDefinition", "rail1").body = "spec:\n  config: '{\"v\":2}'\n";
  object(carol, "NetworkAttachmentDefinition", "rail1").body = "spec:\n  config: '{\"v\":2}'\n";
  PlanDiff third = plan(dir.path(), {alice, carol});
  std::vector<std::string> updated = addresses(third);
  CHECK(count_kind(third, "NetworkAttachmentDefinition") == 1);
  CHECK(std::count(updated.begin(), updated.end(),
                   "update barcelona/_shared/NetworkAttachmentDefinition/rail1") == 1);

  // The last env that holds it leaves: one delete, which apply allows only when named.
  PlanDiff last = plan(dir.path(), {typical_env("alice"), typical_env("carol")});
  std::vector<std::string> deleted = addresses(last);
  CHECK(deleted ==
        std::vector<std::string>{"delete barcelona/_shared/NetworkAttachmentDefinition/rail1"});
  std::ostringstream text;
  render_summary_text(text, last);
  CHECK(text.str().find("  - barcelona/_shared/NetworkAttachmentDefinition/rail1\n"
                        "      ! shared by the envs of its namespace: apply needs "
                        "--allow-destroy=barcelona/_shared/NetworkAttachmentDefinition/rail1\n") !=
        std::string::npos);
  std::ostringstream json;
  render_summary_json(json, last);
  CHECK(json.str().find("\"shared\":true") != std::string::npos);
}

// Loose objects of a repository: one file each under .git/objects/xx/.
std::size_t loose_objects(const std::string& repo) {
  std::size_t count = 0;
  for (const auto& dir : std::filesystem::directory_iterator(repo + "/.git/objects")) {
    const std::string name = dir.path().filename().string();
    if (name.size() != 2 || name == "pa") continue;
    for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
      (void)file;
      ++count;
    }
  }
  return count;
}

TEST_CASE("a plan writes its blobs and trees as one pack, and only the new ones", "[review]") {
  TempDir dir;
  init_repo(dir.path());
  const std::size_t before = loose_objects(dir.path());
  plan(dir.path(), {typical_env("alice"), typical_env("bob")});
  CHECK(loose_objects(dir.path()) == before + 1);  // the commit
  const std::string sts = "plans/barcelona/bob/statefulset-bob.yaml";
  CHECK(show(dir.path(), "HEAD", sts).find("replicas: 2") != std::string::npos);
  std::uintmax_t first_pack = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir.path() + "/.git/objects/pack"))
    if (file.path().extension() == ".pack") first_pack = std::filesystem::file_size(file.path());

  FakeEnv bob = typical_env("bob");
  std::string& body = object(bob, "StatefulSet", "bob").body;
  body.replace(body.find("replicas: 2"), 11, "replicas: 1");
  plan(dir.path(), {typical_env("alice"), bob});
  CHECK(show(dir.path(), "HEAD", sts).find("replicas: 1") != std::string::npos);
  std::size_t packs = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir.path() + "/.git/objects/pack")) {
    if (file.path().extension() != ".pack") continue;
    ++packs;
    // The second pack holds the two changed blobs and four trees, not the whole plan again.
    if (std::filesystem::file_size(file.path()) != first_pack)
      CHECK(std::filesystem::file_size(file.path()) < first_pack / 2);
  }
  CHECK(packs == 2);
  CHECK(std::system(("git -C " + dir.path() + " fsck --full --no-progress 2>/dev/null").c_str()) ==
        0);
}

TEST_CASE("an env of another program keeps a shared object this program's envs drop", "[review]") {
  TempDir dir;
  init_repo(dir.path());
  plan(dir.path(), {env_with_rail("alice")});
  FakeEnv theirs = env_with_rail("dora");
  theirs.source = "other.mlenv";
  {
    ChangeDir in(dir.path());
    Diagnostics diagnostics;
    auto session = PlanSession::open("", diagnostics);
    auto diff = session->diff(tree_from_output(render({theirs})), "other.mlenv", diagnostics);
    REQUIRE(diff);
    // alice's program holds the attachment already: dora's copy creates nothing.
    CHECK(count_kind(*diff, "NetworkAttachmentDefinition") == 0);
    REQUIRE(session->commit("plan\n", diagnostics));
    REQUIRE(session->write_worktree(true, diagnostics));
  }
  PlanDiff dropped = plan(dir.path(), {typical_env("alice")});
  CHECK(count_kind(dropped, "NetworkAttachmentDefinition") == 0);
}

TEST_CASE("the Markdown summary for a pull request", "[review][golden]") {
  TempDir dir;
  init_repo(dir.path());
  plan(dir.path(), {env_with_rail("alice"), env_with_rail("bob")});
  FakeEnv alice = env_with_rail("alice");
  std::string& body = object(alice, "StatefulSet", "alice").body;
  body.replace(body.find("replicas: 2"), 11, "replicas: 1");
  object(alice, "ConfigMap", "alice-boot").body =
      "data:\n  boot.json: '{\"version\":1,\"nnodes\":1}'\n";
  alice.files["Dockerfile"] = "FROM base\nRUN pip install torch numpy\n";
  // alice stays and drops its claim (a delete apply refuses without the flag); bob leaves, and
  // its claim is kept.
  std::erase_if(alice.objects,
                [](const FakeObject& o) { return o.kind == "PersistentVolumeClaim"; });
  PlanDiff diff = plan(dir.path(), {alice});

  MarkdownContext context;
  context.source = "cluster.mlenv";
  context.warnings = {
      "`cluster.mlenv` differs from HEAD: this plan was rendered from a source "
      "the commit does not hold"};
  context.notes = {"barcelona/alice: network = auto chose TCP: no RDMA rail on cluster `lab`"};
  context.commit = "0123456789abcdef0123456789abcdef01234567";
  std::ostringstream out;
  render_summary_markdown(out, diff, context);
  const std::string path = std::string(MLENV_PLAN_GOLDEN_DIR) + "/plan_summary.md";
  if (std::getenv("MLENV_UPDATE_GOLDEN") != nullptr) write_file(path, out.str());
  INFO("golden file " << path);
  CHECK(read_file(path) == out.str());
  // Data loss is not folded away, and the shared attachment alice keeps is not deleted.
  const std::string text = out.str();
  CHECK(text.find("> [!CAUTION]") < text.find("<details>"));
  CHECK(text.find(":warning: `barcelona/alice/PersistentVolumeClaim/workspace` destroys its "
                  "data: apply needs "
                  "`--allow-destroy=barcelona/alice/PersistentVolumeClaim/workspace`") !=
        std::string::npos);
  CHECK(text.find("- `barcelona/bob/PersistentVolumeClaim/workspace` is kept with its data; "
                  "`--allow-destroy=barcelona/bob/PersistentVolumeClaim/workspace` deletes it") !=
        std::string::npos);
  CHECK(text.find(", 1 to keep.**") != std::string::npos);
  CHECK(text.find("NetworkAttachmentDefinition") == std::string::npos);
}

TEST_CASE("Markdown code spans hold any value without ending early", "[review]") {
  PlanDiff diff;
  Change change;
  change.address = "barcelona/a``b/ConfigMap/x";
  change.kind = "ConfigMap";
  change.action = Action::Create;
  change.file = "f";
  diff.changes.push_back(change);
  std::ostringstream out;
  render_summary_markdown(out, diff, {"a`b.mlenv", {}, {}, ""});
  CHECK(out.str().find("## mlenvc plan ``a`b.mlenv``\n") != std::string::npos);
  CHECK(out.str().find("### ```barcelona/a``b```\n") != std::string::npos);
}

TEST_CASE("plan warns when the source it rendered is not what HEAD holds", "[review]") {
  TempDir dir;
  init_repo(dir.path());
  user_commit(dir.path(), {{"lab.mlenv", "env a {}\n"}}, "source");
  ChangeDir in(dir.path());
  Diagnostics clean;
  auto session = PlanSession::open("", clean);
  REQUIRE(session);
  CHECK(session->warn_uncommitted({{"lab.mlenv", "env a {}\n"}}, clean).empty());
  CHECK(clean.all().empty());
  Diagnostics dirty;
  std::vector<std::string> warnings = session->warn_uncommitted(
      {{"lab.mlenv", "env a { nodes = 2 }\n"}, {"extra.mlenv", "image x {}\n"}}, dirty);
  CHECK(warnings ==
        std::vector<std::string>{
            "`lab.mlenv` differs from HEAD: this plan was rendered from a source the commit "
            "does not hold",
            "`extra.mlenv` is not committed: this plan was rendered from a source the commit "
            "does not hold"});
  REQUIRE(dirty.all().size() == 2);
  CHECK(dirty.all()[0].code == Code::W0601);
  CHECK(!dirty.has_errors());
}

}  // namespace
}  // namespace mlenv::plan
