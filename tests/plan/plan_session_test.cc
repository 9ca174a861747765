// Plans in real git repositories: commit contents, compare-and-swap, the user's index, scope.

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>

#include <git2.h>

#include "compiler/plan/blob_id.h"
#include "compiler/plan/pack_file.h"
#include "compiler/plan/plan_session.h"
#include "compiler/plan/summary.h"
#include "tests/plan/support.h"

namespace mlenv::plan {
namespace {

using namespace testing;

struct Planned {
  PlanDiff diff;
  std::optional<ObjectId> commit;
  Diagnostics diagnostics;
};

// What `mlenvc plan` does after rendering.
Planned plan(const std::string& repo, const target::Output& output, bool commit = true,
             const std::string& source = "cluster.mlenv") {
  ChangeDir in(repo);
  Planned result;
  auto session = PlanSession::open("", result.diagnostics);
  REQUIRE(session);
  auto diff = session->diff(tree_from_output(output), source, result.diagnostics);
  REQUIRE(diff);
  result.diff = *diff;
  if (commit && !diff->empty()) {
    result.commit =
        session->commit("mlenvc plan: " + summary_line(*diff) + "\n", result.diagnostics);
    if (!result.commit) return result;
  }
  session->write_worktree(result.commit.has_value(), result.diagnostics);
  return result;
}

// plan compares blob ids it computes itself (OpenSSL's SHA-1) with the ids git stored (libgit2
// hashes with collision-detecting SHA-1): they must agree, or every file would show as changed.
TEST_CASE("a blob's id is the id git gives it", "[plan]") {
  std::string large(1 << 20, 'x');
  for (std::size_t i = 0; i < large.size(); i += 4099) large[i] = static_cast<char>(i);
  for (const std::string& bytes :
       {std::string(), std::string("hello\n"), std::string("a\0b\0\xff", 5), large}) {
    git_oid oid;
    REQUIRE(git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB) == 0);
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, &oid);
    CHECK(plan::to_hex(plan::hash_blob(bytes)) == hex);
  }
  CHECK(plan::to_hex(plan::hash_blob("")) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

// The pack plan writes itself (gitformat-pack(5): pack v2, index v2) is one git reads: each
// object by its id, with its bytes, a duplicate stored once, and `git verify-pack` content.
TEST_CASE("a pack written by pack_file is read by git", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  std::string large(300000, 'y');  // a size header of several bytes
  const std::string texts[] = {"one\n", large, "one\n"};
  std::vector<PackObject> objects;
  for (const std::string& text : texts)
    objects.push_back({hash_blob(text), PackObject::Type::Blob, text});
  PackFiles files = build_pack(objects);
  write_pack_files(dir.path() + "/.git/objects/pack", files);
  for (const std::string& text : texts) {
    std::string id = to_hex(hash_blob(text));
    std::string command =
        "git -C " + dir.path() + " cat-file -p " + id + " > " + dir.path() + "/out";
    REQUIRE(std::system(command.c_str()) == 0);
    CHECK(read_file(dir.path() + "/out") == text);
  }
  std::string verify = "git -C " + dir.path() + " verify-pack -v .git/objects/pack/pack-" +
                       files.checksum + ".idx > " + dir.path() + "/verify";
  REQUIRE(std::system(verify.c_str()) == 0);
  CHECK(read_file(dir.path() + "/verify").find("non delta: 2 objects") != std::string::npos);
}

TEST_CASE("plan, edit, plan again: the second commit holds exactly the edit", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  FakeEnv env = typical_env();
  Planned first = plan(dir.path(), render({env}));
  REQUIRE(first.commit);
  CHECK(first.diff.count(Action::Create) == 10);  // eight objects, the image
  const std::string sts = "plans/barcelona/ml-dev-env/statefulset-ml-dev-env.yaml";
  CHECK(show(dir.path(), "HEAD", sts).find("replicas: 2") != std::string::npos);
  CHECK(show(dir.path(), "HEAD",
             "plans/barcelona/_admin/securitycontextconstraints-mlenvc-rdma.yaml") != "<missing>");
  CHECK(show(dir.path(), "HEAD", "README.md") == "# fleet\n");
  CHECK(read_file(dir.path() + "/" + sts) == show(dir.path(), "HEAD", sts));

  std::string& body = object(env, "StatefulSet", "ml-dev-env").body;
  body.replace(body.find("replicas: 2"), 11, "replicas: 3");
  Planned second = plan(dir.path(), render({env}));
  REQUIRE(second.commit);
  REQUIRE(second.diff.changes.size() == 1);
  CHECK(second.diff.changes[0].fields.size() == 1);
  CHECK(second.diff.changes[0].fields[0].path == "spec.replicas");
  CHECK(rev_parse(dir.path(), "HEAD~1") == to_hex(*first.commit));
  CHECK(show(dir.path(), "HEAD", sts).find("replicas: 3") != std::string::npos);
  CHECK(message(dir.path(), "HEAD") ==
        "mlenvc plan: Plan: 0 to create, 1 to update, 0 to replace, 0 to delete.\n");
  // The index follows the committed plan, so `git status` is clean for the plan directory.
  CHECK(index_entries(dir.path())[sts] == rev_parse(dir.path(), "HEAD:" + sts));

  Planned third = plan(dir.path(), render({env}));
  CHECK(third.diff.empty());
  CHECK(!third.commit);
}

TEST_CASE("two concurrent plans: one wins, the other fails cleanly", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  ChangeDir in(dir.path());
  FakeEnv a = typical_env();
  FakeEnv b = typical_env();
  object(b, "StatefulSet", "ml-dev-env").body += "  minReadySeconds: 5\n";
  Diagnostics da, db;
  auto first = PlanSession::open("", da);
  auto second = PlanSession::open("", db);
  REQUIRE(first->diff(tree_from_output(render({a})), "cluster.mlenv", da));
  REQUIRE(second->diff(tree_from_output(render({b})), "cluster.mlenv", db));
  auto won = first->commit("plan A\n", da);
  REQUIRE(won);
  REQUIRE(first->write_worktree(true, da));
  auto lost = second->commit("plan B\n", db);
  CHECK(!lost);
  REQUIRE(db.all().size() == 1);
  CHECK(db.all()[0].code == Code::E0603);
  CHECK(rev_parse(dir.path(), "HEAD") == to_hex(*won));
  CHECK(message(dir.path(), "HEAD") == "plan A\n");
  CHECK(read_file(dir.path() + "/plans/barcelona/ml-dev-env/statefulset-ml-dev-env.yaml")
            .find("minReadySeconds") == std::string::npos);
  CHECK(show(dir.path(), "HEAD", "README.md") == "# fleet\n");
}

TEST_CASE("a plan commits nothing else of the user's index", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  const std::string canary = "sk-canary-7f0c2d91e4";
  setenv("MLENV_TEST_API_KEY", canary.c_str(), 1);
  user_commit(dir.path(), {{"cluster.mlenv", "env x { }\n"}}, "sources");
  // A staged, uncommitted user file holding a secret value.
  write_file(dir.path() + "/staged.env", "API_KEY=" + canary + "\n");
  {
    ChangeDir in(dir.path());
    Repository::discover(".")->update_index({"staged.env"});
  }
  Planned planned = plan(dir.path(), render({typical_env()}));
  REQUIRE(planned.commit);
  CHECK(show(dir.path(), "HEAD", "staged.env") == "<missing>");
  CHECK(index_entries(dir.path()).count("staged.env") == 1);         // still staged for the user
  CHECK(all_objects(dir.path()).find(canary) != std::string::npos);  // the user's staged blob...
  // ...but no committed tree or commit reaches it.
  CHECK(message(dir.path(), "HEAD").find(canary) == std::string::npos);
  unsetenv("MLENV_TEST_API_KEY");
}

TEST_CASE("no committed byte holds a secret value planted in the environment", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  const std::string canary = "pw-canary-0b8e61aa";
  setenv("MLENV_TEST_PASSWORD", canary.c_str(), 1);
  FakeEnv env = typical_env();
  // The target emits a reference to the Secret, never its value.
  object(env, "StatefulSet", "ml-dev-env").body +=
      "      imagePullSecrets:\n      - name: registry-credentials\n";
  Planned planned = plan(dir.path(), render({env}));
  REQUIRE(planned.commit);
  CHECK(all_objects(dir.path()).find(canary) == std::string::npos);
  unsetenv("MLENV_TEST_PASSWORD");
}

TEST_CASE("a first plan on an unborn branch makes the root commit", "[plan]") {
  TempDir dir;
  init_repo(dir.path(), true);
  Planned planned = plan(dir.path(), render({typical_env()}));
  REQUIRE(planned.commit);
  CHECK(rev_parse(dir.path(), "refs/heads/main") == to_hex(*planned.commit));
  CHECK(rev_parse(dir.path(), "HEAD~1").empty());
}

TEST_CASE("a render owns its own envs only", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  FakeEnv mine = typical_env("alice");
  FakeEnv gone = typical_env("old");
  FakeEnv theirs = typical_env("bob");
  theirs.source = "bob.mlenv";
  REQUIRE(plan(dir.path(), render({theirs}), true, "bob.mlenv").commit);
  REQUIRE(plan(dir.path(), render({mine, gone})).commit);
  Planned again = plan(dir.path(), render({mine}));
  REQUIRE(again.commit);
  CHECK(again.diff.count(Action::Delete) == 7);
  CHECK(again.diff.count(Action::Keep) == 1);  // old's claim
  CHECK(show(dir.path(), "HEAD", "plans/barcelona/old/plan.json") == "<missing>");
  CHECK(show(dir.path(), "HEAD", "plans/barcelona/bob/plan.json") != "<missing>");
  CHECK(!std::filesystem::exists(dir.path() + "/plans/barcelona/old"));
  CHECK(show(dir.path(), "HEAD",
             "plans/barcelona/_admin/securitycontextconstraints-mlenvc-rdma.yaml") != "<missing>");
}

TEST_CASE("a render replaces _runtime/ whole: files the compiler dropped go", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  target::Output first = render({typical_env()});
  first.files.push_back({"_runtime/boot.cc", "int main() {}\n"});
  first.files.push_back({"_runtime/old.cc", "// gone in the next compiler\n"});
  REQUIRE(plan(dir.path(), first).commit);
  CHECK(show(dir.path(), "HEAD", "plans/_runtime/old.cc") != "<missing>");

  target::Output second = render({typical_env()});
  second.files.push_back({"_runtime/boot.cc", "int main() {}\n"});
  Planned again = plan(dir.path(), second);
  REQUIRE(again.commit);
  CHECK(show(dir.path(), "HEAD", "plans/_runtime/old.cc") == "<missing>");
  CHECK(show(dir.path(), "HEAD", "plans/_runtime/boot.cc") == "int main() {}\n");
  CHECK(!std::filesystem::exists(dir.path() + "/plans/_runtime/old.cc"));

  // A render that writes no _runtime/ (no envs) leaves it alone.
  target::Output none = render({});
  plan(dir.path(), none);
  CHECK(show(dir.path(), "HEAD", "plans/_runtime/boot.cc") == "int main() {}\n");
}

TEST_CASE("plan without commit writes the work tree only, and a committed plan checks clean",
          "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  std::string head = rev_parse(dir.path(), "HEAD");
  Planned only = plan(dir.path(), render({typical_env()}), false);
  CHECK(!only.commit);
  CHECK(rev_parse(dir.path(), "HEAD") == head);
  CHECK(std::filesystem::exists(dir.path() + "/plans/barcelona/ml-dev-env/plan.json"));
  REQUIRE(plan(dir.path(), render({typical_env()})).commit);
  CHECK(plan(dir.path(), render({typical_env()}), false).diff.empty());  // --check: fresh
  FakeEnv edited = typical_env();
  edited.inputs["cluster.mlenv"] = "v2";
  CHECK(!plan(dir.path(), render({edited}), false).diff.empty());  // --check: stale
}

TEST_CASE("plan never writes through a committed symbolic link", "[plan]") {
  TempDir dir;
  TempDir outside;
  init_repo(dir.path());
  write_file(outside.path() + "/authorized_keys", "ssh-ed25519 AAAA user\n");
  FakeEnv env = typical_env();
  plan(dir.path(), render({env}));
  user_commit_symlink(dir.path(), "plans/barcelona/ml-dev-env/Dockerfile",
                      outside.path() + "/authorized_keys", "link");
  env.files["Dockerfile"] = "FROM base\nRUN attacker\n";
  Planned second = plan(dir.path(), render({env}));
  REQUIRE(second.commit);
  CHECK(read_file(outside.path() + "/authorized_keys") == "ssh-ed25519 AAAA user\n");
  const std::string dockerfile = dir.path() + "/plans/barcelona/ml-dev-env/Dockerfile";
  CHECK(!std::filesystem::is_symlink(std::filesystem::symlink_status(dockerfile)));
  CHECK(read_file(dockerfile) == "FROM base\nRUN attacker\n");
  CHECK(show(dir.path(), "HEAD", "plans/barcelona/ml-dev-env/Dockerfile") ==
        "FROM base\nRUN attacker\n");
  // A linked directory on the way is replaced, not followed.
  std::filesystem::remove_all(dir.path() + "/plans/barcelona/ml-dev-env");
  std::filesystem::create_directory_symlink(outside.path(),
                                            dir.path() + "/plans/barcelona/ml-dev-env");
  env.files["Dockerfile"] = "FROM base\nRUN again\n";
  plan(dir.path(), render({env}));
  CHECK(!std::filesystem::exists(outside.path() + "/Dockerfile"));
  CHECK(std::filesystem::is_directory(
      std::filesystem::symlink_status(dir.path() + "/plans/barcelona/ml-dev-env")));
}

TEST_CASE("a plans link to a directory outside the work tree is refused", "[plan]") {
  TempDir dir;
  TempDir outside;
  init_repo(dir.path());
  std::filesystem::create_directory_symlink(outside.path(), dir.path() + "/plans");
  ChangeDir in(dir.path());
  Diagnostics diagnostics;
  CHECK(!PlanSession::open("", diagnostics));
  CHECK(diagnostics.has_errors());
  CHECK(diagnostics.all()[0].code == Code::E0605);
  CHECK(std::filesystem::is_empty(outside.path()));
}

TEST_CASE("plan --out into a directory of the user's files is refused", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  user_commit(dir.path(), {{"docs/barcelona/ml-dev-env/notes.md", "mine\n"}}, "docs");
  ChangeDir in(dir.path());
  Diagnostics diagnostics;
  CHECK(!PlanSession::open("docs", diagnostics));
  REQUIRE(diagnostics.has_errors());
  CHECK(diagnostics.all()[0].code == Code::E0608);
  CHECK(read_file(dir.path() + "/docs/barcelona/ml-dev-env/notes.md") == "mine\n");
  // New, empty, and plan directories are fine.
  Diagnostics fine;
  CHECK(PlanSession::open("new-plans", fine));
  std::filesystem::create_directory(dir.path() + "/empty");
  CHECK(PlanSession::open("empty", fine));
  auto session = PlanSession::open("plans", fine);
  REQUIRE(session);
  session->diff(tree_from_output(render({typical_env()})), "cluster.mlenv", fine);
  session->commit("plan\n", fine);
  session->write_worktree(true, fine);
  CHECK(PlanSession::open("plans", fine));
  CHECK(!fine.has_errors());
}

TEST_CASE("what would fail after the commit is refused before the branch moves", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  FakeEnv env = typical_env();
  plan(dir.path(), render({env}));
  object(env, "StatefulSet", "ml-dev-env").body += "  minReadySeconds: 5\n";
  const std::string sts = "plans/barcelona/ml-dev-env/statefulset-ml-dev-env.yaml";
  const std::string head = rev_parse(dir.path(), "HEAD");
  // Before, each of these let plan commit and then fail on the index or the work tree: the
  // branch moved, the index did not, and the next `git commit` reverted the plan.
  write_file(dir.path() + "/.git/index.lock", "");  // another git holds the index
  Planned locked = plan(dir.path(), render({env}));
  CHECK_FALSE(locked.commit);
  CHECK(locked.diagnostics.has_errors());
  CHECK(rev_parse(dir.path(), "HEAD") == head);
  std::filesystem::remove(dir.path() + "/.git/index.lock");
  FakeEnv long_name = env;
  long_name.files[std::string(300, 'x')] = "x\n";
  Planned too_long = plan(dir.path(), render({long_name}));
  CHECK_FALSE(too_long.commit);
  CHECK(rev_parse(dir.path(), "HEAD") == head);
  // Nothing was left half done: the next plan commits, and the index holds it.
  Planned again = plan(dir.path(), render({env}));
  CHECK(again.commit);
  CHECK(!again.diagnostics.has_errors());
  CHECK(index_entries(dir.path())[sts] == rev_parse(dir.path(), "HEAD:" + sts));
  CHECK(read_file(dir.path() + "/" + sts) == show(dir.path(), "HEAD", sts));
}

TEST_CASE("a plans path that is a file is refused before the branch moves", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  const std::string head = rev_parse(dir.path(), "HEAD");
  write_file(dir.path() + "/plans", "not a folder\n");
  Planned refused = plan(dir.path(), render({typical_env()}));
  CHECK_FALSE(refused.commit);
  CHECK(refused.diagnostics.has_errors());
  CHECK(rev_parse(dir.path(), "HEAD") == head);
}

TEST_CASE("two programs planning one env name into one namespace are refused", "[plan]") {
  TempDir dir;
  init_repo(dir.path());
  plan(dir.path(), render({typical_env()}));
  ChangeDir in(dir.path());
  FakeEnv other = typical_env();
  other.cluster = "barcelona-b";  // another cluster block, the same namespace and env name
  other.source = "team-b.mlenv";
  Diagnostics diagnostics;
  auto session = PlanSession::open("", diagnostics);
  CHECK(!session->diff(tree_from_output(render({other})), "team-b.mlenv", diagnostics));
  REQUIRE(diagnostics.has_errors());
  CHECK(diagnostics.all()[0].code == Code::E0609);
  CHECK(diagnostics.all()[0].message ==
        "env `barcelona-b/ml-dev-env` (namespace `nccl-test`) collides with "
        "`barcelona/ml-dev-env`, planned by `cluster.mlenv`");
  // The same `<cluster>/<env>` from another program, whatever its namespace.
  other.cluster = "barcelona";
  other.namespace_ = "team-b";
  Diagnostics same_unit;
  auto again = PlanSession::open("", same_unit);
  CHECK(!again->diff(tree_from_output(render({other})), "team-b.mlenv", same_unit));
  CHECK(same_unit.has_errors());
  // Another namespace and cluster is fine; so is the same program planning again.
  other.cluster = "barcelona-b";
  Diagnostics fine;
  auto third = PlanSession::open("", fine);
  CHECK(third->diff(tree_from_output(render({other})), "team-b.mlenv", fine));
  CHECK(third->diff(tree_from_output(render({typical_env()})), "cluster.mlenv", fine));
  CHECK(!fine.has_errors());
}

}  // namespace
}  // namespace mlenv::plan
