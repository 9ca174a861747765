// `mlenvc results`: the env found in the committed plans, rank 0's log read through the
// recording client, the MLENV_RESULTS line parsed and shown as a table.

#include <catch2/catch.hpp>

#include "compiler/apply/results.h"
#include "tests/plan/apply_fixture.h"

namespace mlenv::plan {
namespace {

using namespace testing;

const std::string kPassed =
    R"({"format_version": 1, "job": "barcelona/ml-dev-env", "status": "passed", "error": "",)"
    R"( "world_size": 8, "nnodes": 2, "nproc_per_node": 4, "transport": "rdma",)"
    R"( "nccl_version": "2.28.9", "total_time_s": 12.3, "min_busbw_gbps": 40,)"
    R"( "avg_busbw_gbps": 41.2, "rows": [{"bytes": 8, "count": 2, "type": "float", "op": "sum",)"
    R"( "time_us": 10.1, "algbw_gbps": 0.0, "busbw_gbps": 0.0, "wrong": 0},)"
    R"( {"bytes": 8589934592, "time_us": 150000, "algbw_gbps": 57.3, "busbw_gbps": 100.2}]})";

// Makes the env an acceptance run (the only kind whose rank 0 writes a result) and the
// stand-in print `log` for `kubectl logs`.
void pod_log(ApplyFixture& f, const std::string& log) {
  f.env.env_kind = "acceptance";
  f.commit_plan();
  write_file(f.dir.path() + "/.pod-log", log);
  f.reply({"logs|0|@" + f.dir.path() + "/.pod-log"}, true);
}

int results(ApplyFixture& f, const std::string& env, std::string& out, std::string& err,
            bool json = false) {
  ChangeDir in(f.dir.path());
  std::filesystem::remove(f.log);
  write_file(f.log, "");
  ResultsRequest request;
  request.env = env;
  request.json = json;
  std::ostringstream text;
  Diagnostics diagnostics;
  int status = show_results(request, text, diagnostics);
  out = text.str();
  std::ostringstream errors;
  SourceManager none;
  for (const Diagnostic& d : diagnostics.all()) render_text(errors, none, d);
  err = errors.str();
  return status;
}

// A JobSet names its child Jobs `<jobset>-<replicatedJob>-<index>` (`trainer-node-0`), so
// `job-name=trainer` matches no pod; the JobSet controller labels every Job and pod it makes
// `jobset.sigs.k8s.io/jobset-name` (JobSetNameKey, kubernetes-sigs/jobset
// api/jobset/v1alpha2/jobset_types.go), and the Job controller still labels each pod of the
// Indexed child Job with its batch.kubernetes.io/job-completion-index.
TEST_CASE("results finds a JobSet's rank 0 by the JobSet's labels, with kubectl on Kubernetes",
          "[results]") {
  ApplyFixture f;
  make_kubernetes_run(f);
  pod_log(f, "MLENV_RESULTS " + kPassed + "\n");
  std::string out, err;
  REQUIRE(results(f, "ml-dev-env", out, err) == 0);
  CHECK(f.commands() ==
        std::vector<std::string>{"kubectl logs -n nccl-test -l jobset.sigs.k8s.io/jobset-name="
                                 "trainer,batch.kubernetes.io/job-completion-index=0 --tail=-1"});
}

TEST_CASE("results reads rank 0's log and prints the table, passed", "[results]") {
  ApplyFixture f;
  pod_log(f, "[rank 0] starting\nMLENV_RESULTS " + kPassed + "\ndone\n");
  std::string out, err;
  REQUIRE(results(f, "ml-dev-env", out, err) == 0);
  CHECK(f.commands() ==
        std::vector<std::string>{"oc logs -n nccl-test -l job-name=ml-dev-env,batch.kubernetes.io/"
                                 "job-completion-index=0 --tail=-1"});
  CHECK(out ==
        "barcelona/ml-dev-env: 8 GPUs on 2 nodes, rdma, NCCL 2.28.9\n"
        "      size     time (us)  algbw (GB/s)  busbw (GB/s)\n"
        "        8B         10.10          0.00          0.00\n"
        "        8G     150000.00         57.30        100.20\n"
        "average busbw: 41.20 GB/s\n"
        "threshold:     40.00 GB/s\n"
        "PASSED\n");
  // CLUSTER/ENV names it too; --format=json prints the document.
  REQUIRE(results(f, "barcelona/ml-dev-env", out, err, true) == 0);
  CHECK(out == kPassed + "\n");
}

TEST_CASE("results exits 1 when the run failed, and escapes what the log says", "[results]") {
  ApplyFixture f;
  std::string failed = kPassed;
  failed.replace(failed.find("\"passed\""), 8, "\"failed\"");
  failed.replace(failed.find("\"rdma\""), 6, "\"rdma\\u001b[2K\"");
  pod_log(f, "MLENV_RESULTS " + failed + "\n");
  std::string out, err;
  CHECK(results(f, "ml-dev-env", out, err) == 1);
  CHECK(out.ends_with("FAILED\n"));
  CHECK(out.find('\x1b') == std::string::npos);
  CHECK(out.find("rdma\\u001b[2K") != std::string::npos);
}

// results.json format 2 (runtime/README.md): the localisation's suspects after the sweep.
const std::string kSuspects =
    R"({"format_version": 2, "job": "barcelona/ml-dev-env", "status": "failed",)"
    R"( "error": "2 suspect(s) named", "world_size": 32, "nnodes": 4, "transport": "rdma",)"
    R"( "nccl_version": "2.28.9", "min_busbw_gbps": 40, "avg_busbw_gbps": 12.5,)"
    R"( "rows": [{"bytes": 8, "time_us": 10, "algbw_gbps": 0, "busbw_gbps": 0}],)"
    R"( "hosts": ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"], "localised": true,)"
    R"( "nodes": [], "pairs": [], "rails": [], "steps": [], "suspects": [)"
    R"({"node": 3, "partner": null, "rail": "mlx5_2", "reason": "rail far below the other rails",)"
    R"( "measured_gbps": 2.5, "expected_gbps": 25, "check": "ibstat"},)"
    R"( {"node": 1, "partner": 2, "rail": "", "reason": "slow only together",)"
    R"( "measured_gbps": 60, "expected_gbps": 200, "check": "the cables"}]})";

TEST_CASE("results prints the suspects and exits 2 when the run failed with suspects",
          "[results]") {
  ApplyFixture f;
  pod_log(f, "MLENV_RESULTS " + kSuspects + "\n");
  std::string out, err;
  CHECK(results(f, "ml-dev-env", out, err) == kResultsFailedWithSuspects);
  INFO(out);
  CHECK(out.find("FAILED\n"
                 "\n"
                 "suspects:\n"
                 "  node                    rail        measured  expected  what to check\n"
                 "  3 (10.0.0.4)            mlx5_2          2.50     25.00  rail far below the "
                 "other rails: ibstat\n"
                 "  1-2 (10.0.0.2)          -              60.00    200.00  slow only together: "
                 "the cables\n") != std::string::npos);
}

TEST_CASE("results exits 1 when the run failed with no single suspect", "[results]") {
  ApplyFixture f;
  std::string none = kSuspects;
  none.replace(none.find("\"suspects\": ["), none.size() - none.find("\"suspects\": ["),
               "\"suspects\": []}");
  pod_log(f, "MLENV_RESULTS " + none + "\n");
  std::string out, err;
  CHECK(results(f, "ml-dev-env", out, err) == 1);
  CHECK(out.ends_with("FAILED\nno single suspect: every node, pair and rail measured alike\n"));
}

TEST_CASE("results says clearly when there is no result yet, or no such env", "[results]") {
  ApplyFixture f;
  pod_log(f, "[rank 0] NCCL self-test: 8 sizes\n");
  std::string out, err;
  CHECK(results(f, "ml-dev-env", out, err) == 1);
  CHECK(out.empty());
  CHECK(err.find("error[E0716]: no result of `barcelona/ml-dev-env` yet") != std::string::npos);
  CHECK(err.find("printed no MLENV_RESULTS line") != std::string::npos);
  CHECK(results(f, "trainer", out, err) == 1);
  CHECK(err.find("error[E0715]: no committed plan has env `trainer`") != std::string::npos);
  CHECK(f.commands().empty());
}

TEST_CASE("results of an env that is not an acceptance run says so at once", "[results]") {
  // Only an acceptance run's rank 0 runs the NCCL self-test and writes a result (mlenv-boot
  // --nccl-check); a run or a dev env never will, so "no result yet" would never change.
  ApplyFixture f;
  make_kubernetes_run(f);
  std::string out, err;
  CHECK(results(f, "ml-dev-env", out, err) == 1);
  CHECK(out.empty());
  CHECK(err.find("error[E0716]: `barcelona/ml-dev-env` is a run env, not an acceptance run: it "
                 "has no result") != std::string::npos);
  CHECK(err.find("read its output with `mlenvc logs ml-dev-env`") != std::string::npos);
  CHECK(f.commands().empty());
}

TEST_CASE("a result whose self-test never ran claims no GPU", "[results]") {
  // mlenv-boot's `error` document before the sweep (runtime/boot.cc fail_before_self_test):
  // world_size is what the test was to use, and no row was measured.
  std::string error;
  std::optional<RunResults> parsed = parse_results(
      R"({"format_version": 2, "job": "lab/accept", "status": "error", "error": "--nccl-check:)"
      R"( built without NCCL", "world_size": 2, "nnodes": 2, "transport": "tcp",)"
      R"( "nccl_version": "", "rows": []})",
      error);
  REQUIRE(parsed);
  std::ostringstream out;
  print_results(out, *parsed);
  CHECK(out.str().starts_with(
      "lab/accept: no GPU measured on 2 nodes: the NCCL self-test did not run, tcp\n"));
  CHECK(out.str().find("GPUs") == std::string::npos);
  CHECK(out.str().find("NCCL \n") == std::string::npos);
  CHECK(out.str().ends_with("ERROR: --nccl-check: built without NCCL\n"));
}

TEST_CASE("the last MLENV_RESULTS line of a log is the result", "[results]") {
  CHECK(!find_results_line("nothing here\n"));
  CHECK(find_results_line("a\nMLENV_RESULTS {\"x\":1}\r\nMLENV_RESULTS {\"x\":2}") == "{\"x\":2}");
  CHECK(!find_results_line(" MLENV_RESULTS {}"));  // only at the start of a line
  std::string error;
  CHECK(!parse_results("{\"format_version\": 3}", error));
  CHECK(!parse_results("{\"format_version\": 1, \"status\": \"maybe\"}", error));
  CHECK(error == "unknown status `maybe`");
}

}  // namespace
}  // namespace mlenv::plan
