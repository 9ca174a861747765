// Every plan and apply diagnostic, rendered as mlenvc prints it, compared byte for byte with
// tests/plan/golden/<CODE>.stderr. MLENV_UPDATE_GOLDEN=1 rewrites the files for review in git.

#include <catch2/catch.hpp>

#include <git2.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/apply/destroy.h"
#include "compiler/apply/results.h"
#include "tests/plan/apply_fixture.h"
#include "tests/plan/golden.h"

namespace mlenv::plan {
namespace {

using namespace testing;

std::string rendered(const Diagnostics& diagnostics, const std::string& tmp) {
  std::ostringstream out;
  SourceManager none;
  for (const Diagnostic& d : diagnostics.all()) render_text(out, none, d);
  std::string text = out.str();
  for (std::size_t at; !tmp.empty() && (at = text.find(tmp)) != std::string::npos;)
    text.replace(at, tmp.size(), "$TMP");
  return text;
}

TEST_CASE("golden E0601 E0605 E0608: where the plan directory may be", "[golden]") {
  TempDir dir;
  ChangeDir in(dir.path());
  Diagnostics outside;
  CHECK(!PlanSession::open("", outside));
  golden("E0601", rendered(outside, dir.path()));
  init_repo(dir.path());
  Diagnostics escape;
  CHECK(!PlanSession::open(".git/plans", escape));
  golden("E0605", rendered(escape, dir.path()));
  user_commit(dir.path(), {{"docs/guide.md", "mine\n"}}, "docs");
  Diagnostics taken;
  CHECK(!PlanSession::open("docs", taken));
  golden("E0608", rendered(taken, dir.path()));
}

TEST_CASE("golden E0602 E0603 E0604 E0606 E0609: committing a plan", "[golden]") {
  TempDir dir;
  init_repo(dir.path());
  ChangeDir in(dir.path());
  Diagnostics race;
  auto first = PlanSession::open("", race);
  auto second = PlanSession::open("", race);
  first->diff(tree_from_output(render({typical_env()})), "cluster.mlenv", race);
  second->diff(tree_from_output(render({typical_env("other")})), "cluster.mlenv", race);
  REQUIRE(first->commit("first\n", race));
  CHECK(!second->commit("second\n", race));
  golden("E0603", rendered(race, dir.path()));

  Diagnostics stale;
  report_stale_check("plans", "cluster.mlenv", stale);
  golden("E0606", rendered(stale, dir.path()));

  FakeEnv twin = typical_env();
  twin.cluster = "madrid";
  twin.source = "twin.mlenv";
  Diagnostics collision;
  auto fifth = PlanSession::open("", collision);
  CHECK(!fifth->diff(tree_from_output(render({twin})), "twin.mlenv", collision));
  golden("E0609", rendered(collision, dir.path()));

  write_file(dir.path() + "/.git/index.lock", "");
  Diagnostics locked;
  auto third = PlanSession::open("", locked);
  third->diff(tree_from_output(render({typical_env("third")})), "cluster.mlenv", locked);
  CHECK(!third->commit("third\n", locked));  // refused before the branch moves
  golden("E0604", rendered(locked, dir.path()));
  std::filesystem::remove(dir.path() + "/.git/index.lock");

  git_repository* repo = nullptr;
  git_libgit2_init();
  REQUIRE(git_repository_open(&repo, dir.path().c_str()) == 0);
  git_oid head;
  REQUIRE(git_reference_name_to_id(&head, repo, "HEAD") == 0);
  REQUIRE(git_repository_set_head_detached(repo, &head) == 0);
  git_repository_free(repo);
  Diagnostics detached;
  auto fourth = PlanSession::open("", detached);
  fourth->diff(tree_from_output(render({typical_env("fourth")})), "cluster.mlenv", detached);
  CHECK(!fourth->commit("fourth\n", detached));
  golden("E0602", rendered(detached, dir.path()));
}

TEST_CASE("golden E0607 E0701 E0702 E0709: plans apply refuses", "[golden]") {
  {
    ApplyFixture f;
    write_file(f.dir.path() + "/plans/barcelona/ml-dev-env/Dockerfile", "FROM edited\n");
    write_file(f.dir.path() + "/plans/barcelona/ml-dev-env/notes.txt", "untracked\n");
    CHECK(f.apply() == 1);
    golden("E0701", f.err);
  }
  {
    ApplyFixture f;
    f.fresh.inputs["cluster.mlenv"] = "v2";
    f.fresh.inputs["std/images/pytorch.mlenv"] = "new";
    CHECK(f.apply() == 1);
    golden("E0702", f.err);
  }
  {
    ApplyFixture f;
    user_commit(f.dir.path(),
                {{"plans/barcelona/ml-dev-env/plan.json", "{\"format_version\": 2}\n"}}, "broken");
    CHECK(f.apply() == 1);
    golden("E0607", f.err);
  }
  {
    ApplyFixture f;
    ApplyRequest request;
    request.plan_dirs = {"nowhere"};
    CHECK(f.apply(request) == 1);
    golden("E0709", f.err);
  }
}

// plan.json's `source` arrives through review like any other text; apply re-renders it, so a
// source outside the work tree would make the compiler read and print a file that is no program.
TEST_CASE("golden E0510: apply re-renders only sources inside the work tree", "[golden]") {
  for (const char* source : {"/proc/self/environ", "../outside.mlenv", "secrets.txt"}) {
    ApplyFixture f;
    // Another source's plan of the same env is refused by plan (E0609): remove the first one.
    REQUIRE(std::system(("git -C " + f.dir.path() + " rm -rq plans && git -C " + f.dir.path() +
                         " commit -qm 'remove the plan'")
                            .c_str()) == 0);
    f.env.source = source;
    f.commit_plan();
    bool rendered_it = false;
    ApplyRequest request;
    request.render = [&](const std::string&, Diagnostics&) -> std::optional<target::Output> {
      rendered_it = true;
      return std::nullopt;
    };
    CHECK(f.apply(request) == 1);
    CHECK_FALSE(rendered_it);
    CHECK(f.commands().empty());
    if (std::string(source) == "/proc/self/environ") golden("E0510", f.err);
  }
}

TEST_CASE("golden E0703 E0704 E0705: apply checks before running anything", "[golden]") {
  ApplyFixture f;
  REQUIRE(f.apply() == 0);
  f.env.objects.erase(f.env.objects.begin() + 2);  // the PVC
  f.commit_plan();
  CHECK(f.apply() == 1);
  golden("E0704", f.err);
  ApplyRequest typo;
  typo.steps.allow_destroy = {"barcelona/ml-dev-env/PersistentVolumeClaim/workspace",
                              "barcelona/ml-dev-env/PersistentVolumeClaim/work-space"};
  CHECK(f.apply(typo) == 1);
  golden("E0705", f.err);
  setenv("PATH", (f.dir.path() + "/.nothing").c_str(), 1);
  ApplyRequest allowed;
  allowed.steps.allow_destroy = {"barcelona/ml-dev-env/PersistentVolumeClaim/workspace"};
  CHECK(f.apply(allowed) == 1);
  golden("E0703", f.err);
}

TEST_CASE("golden E0706 E0707 E0708: apply stops or warns", "[golden]") {
  {
    ApplyFixture f;
    setenv("MLENV_FAKE_FAIL", "rollout", 1);
    CHECK(f.apply() == 1);
    golden("E0706", f.err);
  }
  {
    ApplyFixture f;
    setenv("MLENV_FAKE_SLEEP", "5", 1);
    ApplyRequest request;
    request.steps.timeout = "1s";
    CHECK(f.apply(request) == 1);
    golden("E0707", f.err);
  }
  {
    ApplyFixture f;
    setenv("MLENV_FAKE_WRITE",
           (f.dir.path() + "/.git/refs/mlenv/applied/barcelona/ml-dev-env").c_str(), 1);
    setenv("MLENV_FAKE_WRITE_VALUE", rev_parse(f.dir.path(), "HEAD").c_str(), 1);
    CHECK(f.apply() == 1);
    golden("E0708", f.err);
  }
}

TEST_CASE("golden E0710 E0711 E0712 E0714 E0717: apply checks the cluster and its inputs",
          "[golden]") {
  {
    ApplyFixture f;
    f.reply({"get namespace|0|"}, true);
    CHECK(f.apply() == 1);
    golden("E0710", f.err);
  }
  {
    ApplyFixture f;
    f.reply({"auth can-i|1|no"}, true);
    CHECK(f.apply() == 1);
    golden("E0711", f.err);
  }
  {
    ApplyFixture f;
    f.reply({"get istag|0|"}, true);
    CHECK(f.apply() == 1);
    golden("E0712", f.err);
  }
  {
    ApplyFixture f;
    const std::string path = "plans/barcelona/ml-dev-env/statefulset-ml-dev-env.yaml";
    user_commit(f.dir.path(), {{path, show(f.dir.path(), "HEAD", path) + "  hostPID: true\n"}},
                "edit");
    CHECK(f.apply() == 1);
    golden("E0717", f.err);
  }
  {
    ApplyFixture f;
    ApplyRequest request;
    request.steps.timeout = "30x";
    CHECK(f.apply(request) == 1);
    golden("E0714", f.err);
  }
}

TEST_CASE("golden E0713 E0715 E0716: runs and their results", "[golden]") {
  ApplyFixture f;
  FakeObject& sts = object(f.env, "StatefulSet", "ml-dev-env");
  sts = {"batch/v1", "Job", "ml-dev-env", "spec:\n  completions: 2\n", 8, false};
  f.env.env_kind = "acceptance";
  f.env.actions = {f.env.actions[0], "{\"action\": \"complete\", \"after\": \"Job/ml-dev-env\"}"};
  f.commit_plan();
  f.reply({"get job|0|Failed"}, true);
  ApplyRequest request;
  request.steps.wait = true;
  request.poll_ms = 10;
  CHECK(f.apply(request) == kExitRunFailed);
  golden("E0713", f.err);

  ChangeDir in(f.dir.path());
  std::ostringstream out;
  Diagnostics missing;
  CHECK(show_results({"nowhere/ml-dev-env", "", false, 10}, out, missing) == 1);
  golden("E0715", rendered(missing, f.dir.path()));
  f.reply({"logs|0|"}, true);
  Diagnostics none;
  CHECK(show_results({"ml-dev-env", "", false, 10}, out, none) == 1);
  golden("E0716", rendered(none, f.dir.path()));
}

TEST_CASE("golden E0719: the client points at another cluster", "[golden]") {
  ApplyFixture f;
  f.env.more_keys = {"\"api\": \"api.barcelona.example.com\""};
  f.commit_plan();
  setenv("MLENV_FAKE_SERVER", "https://api.staging.example.com:6443", 1);
  CHECK(f.apply() == 1);
  golden("E0719", f.err);
}

TEST_CASE("golden W0601 E0718: an uncommitted source, an env with no record to destroy",
          "[golden]") {
  ApplyFixture f;
  ChangeDir in(f.dir.path());
  Diagnostics uncommitted;
  auto session = PlanSession::open("", uncommitted);
  REQUIRE(session);
  session->warn_uncommitted({{"cluster.mlenv", "env ml-dev-env {}\n"}}, uncommitted);
  golden("W0601", rendered(uncommitted, f.dir.path()));

  std::ostringstream out;
  Diagnostics unknown;
  DestroyRequest request;
  request.env = "ml-dev-env";
  CHECK(destroy_env(request, out, unknown) == 1);
  golden("E0718", rendered(unknown, f.dir.path()));
}

}  // namespace
}  // namespace mlenv::plan
