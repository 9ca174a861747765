#include <catch2/catch.hpp>

#include "exit_code.h"
#include "harness.h"
#include "json.h"
#include "nccl_check.h"
#include "util.h"

using boot_test::BootProcess;
using boot_test::TempDir;

TEST_CASE("nccl check: bandwidth the way nccl-tests computes it", "[nccl]") {
  CHECK(boot::algorithm_bandwidth(1'000'000'000, 0.5) == Approx(2.0));
  CHECK(boot::allreduce_busbw(10.0, 1) == 0.0);
  CHECK(boot::allreduce_busbw(10.0, 2) == Approx(10.0));
  CHECK(boot::allreduce_busbw(10.0, 8) == Approx(17.5));
  std::vector<boot::SweepRow> rows(2);
  rows[0].busbw_gbps = 10;
  rows[1].busbw_gbps = 20;
  CHECK(boot::average_busbw(rows) == Approx(15.0));
  CHECK(boot::average_busbw({}) == 0.0);
  auto sizes = boot::sweep_sizes(128);
  CHECK(sizes == std::vector<std::uint64_t>{8, 16, 32, 64, 128});
}

namespace {

std::vector<boot::SweepRow> rows_averaging(double first, double second) {
  std::vector<boot::SweepRow> rows(2);
  rows[0].busbw_gbps = first;
  rows[1].busbw_gbps = second;
  return rows;
}

}  // namespace

TEST_CASE("nccl check: the verdict against min_busbw_gbps, at, below and above", "[nccl]") {
  // The average is 40 exactly: at the threshold passes, an epsilon above it fails.
  CHECK(boot::judge_sweep(rows_averaging(30, 50), 40).status == "passed");
  CHECK(boot::judge_sweep(rows_averaging(30, 50), 39.5).status == "passed");
  boot::SweepVerdict below = boot::judge_sweep(rows_averaging(30, 50), 40.001);
  CHECK(below.status == "failed");
  CHECK(below.error.find("below the threshold") != std::string::npos);
  CHECK(boot::verdict_exit_code(below) == boot::kExitNcclCheckFailed);
  CHECK(boot::kExitNcclCheckFailed == 1);  // the contract: 1 means below the threshold
  // Fast but wrong is a failure, whatever the bandwidth.
  std::vector<boot::SweepRow> wrong = rows_averaging(100, 100);
  wrong[1].wrong = 3;
  boot::SweepVerdict corrupted = boot::judge_sweep(wrong, 0);
  CHECK(corrupted.status == "failed");
  CHECK(corrupted.error == "3 wrong values");
  CHECK(boot::verdict_exit_code({"passed", ""}) == 0);
  CHECK(boot::verdict_exit_code({"error", "ncclCommInitRankConfig: ..."}) ==
        boot::kExitNcclCheckError);
}

TEST_CASE("nccl check: results.json has the contract's shape", "[nccl]") {
  boot::NcclCheckRequest request;
  request.job = "barcelona/accept";
  request.nnodes = 2;
  request.nproc_per_node = 4;
  request.transport = "rdma";
  request.min_busbw_gbps = 5;
  request.nccl_env = {{"NCCL_IB_HCA", "=mlx5_2:1"}};
  boot::SweepRow row;
  row.bytes = 1024;
  row.count = 256;
  row.time_us = 10;
  row.algbw_gbps = boot::algorithm_bandwidth(1024, 10e-6);
  row.busbw_gbps = boot::allreduce_busbw(row.algbw_gbps, 8);
  boot::CheckTimes times{"2026-01-01T00:00:00Z", "2026-01-01T00:00:12Z", 12.5};
  boot::Localisation localisation;
  localisation.ran = true;
  localisation.nodes = {{0, 360, ""}, {1, 72, ""}};
  localisation.pairs = {{1, 0, 1, 70, ""}};
  localisation.rails = {{0, 1, "mlx5_2", 2.5, ""}};
  localisation.steps = {{"node", 0.5}};
  localisation.suspects = {{1, -1, "", "slow", 72, 360, "NVLink"},
                           {0, 1, "mlx5_2", "rail slow", 2.5, 25, "cable"}};
  boot::Json results = boot::results_to_json(request, {row}, boot::judge_sweep({row}, 5), "2.28.9",
                                             times, localisation);
  auto reparsed = boot::parse_json(results.pretty());
  REQUIRE(reparsed.value);
  const boot::Json& json = *reparsed.value;
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.as_object()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"format_version", "job",
                                         "status",         "error",
                                         "world_size",     "nnodes",
                                         "nproc_per_node", "transport",
                                         "nccl_version",   "started_at",
                                         "finished_at",    "total_time_s",
                                         "min_busbw_gbps", "avg_busbw_gbps",
                                         "rows",           "env",
                                         "hosts",          "localised",
                                         "nodes",          "pairs",
                                         "rails",          "steps",
                                         "suspects"});
  CHECK(json.find("format_version")->as_int() == 2);
  CHECK(json.find("localised")->as_bool());
  CHECK(json.find("nodes")->as_array()[1] ==
        *boot::parse_json(R"({"node":1,"busbw_gbps":72,"error":""})").value);
  CHECK(json.find("pairs")->as_array()[0] ==
        *boot::parse_json(R"({"round":1,"nodes":[0,1],"busbw_gbps":70,"error":""})").value);
  CHECK(json.find("rails")->as_array()[0] ==
        *boot::parse_json(R"({"node":0,"partner":1,"hca":"mlx5_2","busbw_gbps":2.5,"error":""})")
             .value);
  CHECK(json.find("steps")->as_array()[0] ==
        *boot::parse_json(R"({"step":"node","seconds":0.5})").value);
  CHECK(json.find("suspects")->as_array()[0] ==
        *boot::parse_json(R"({"node":1,"partner":null,"rail":"","reason":"slow",)"
                          R"("measured_gbps":72,"expected_gbps":360,"check":"NVLink"})")
             .value);
  CHECK(json.find("suspects")->as_array()[1].find("partner")->as_int() == 1);
  CHECK(json.find("job")->as_string() == "barcelona/accept");
  CHECK(json.find("world_size")->as_int() == 8);
  CHECK(json.find("transport")->as_string() == "rdma");
  CHECK(json.find("nccl_version")->as_string() == "2.28.9");
  CHECK(json.find("total_time_s")->as_number() == 12.5);
  CHECK(json.find("status")->as_string() == "failed");  // 0.18 GB/s is below 5
  CHECK(json.find("min_busbw_gbps")->as_number() == 5);
  REQUIRE(json.find("rows")->as_array().size() == 1);
  const boot::Json& first = json.find("rows")->as_array()[0];
  std::vector<std::string> columns;
  for (const auto& [key, value] : first.as_object()) columns.push_back(key);
  CHECK(columns == std::vector<std::string>{"bytes", "count", "type", "op", "time_us", "algbw_gbps",
                                            "busbw_gbps", "wrong"});
  CHECK(first.find("bytes")->as_int() == 1024);
  CHECK(first.find("type")->as_string() == "float");
  CHECK(first.find("op")->as_string() == "sum");
  CHECK(first.find("busbw_gbps")->as_number() == Approx(0.1792));
  CHECK(json.find("avg_busbw_gbps")->as_number() == Approx(0.1792));
  CHECK(json.find("env")->find("NCCL_IB_HCA")->as_string() == "=mlx5_2:1");

  // The pod-log line is one line: the compact document after the marker.
  std::string line = boot::results_line(results);
  CHECK(line.rfind("MLENV_RESULTS {", 0) == 0);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(*boot::parse_json(line.substr(14)).value == results);
}

TEST_CASE("nccl check: a failed NCCL run is an error document without rows", "[nccl]") {
  boot::NcclCheckRequest request;
  request.job = "barcelona/accept";
  request.transport = "tcp";
  boot::Json results = boot::results_to_json(
      request, {}, {"error", "--nccl-check: ncclCommInitRankConfig: unhandled system error"}, "",
      {"t0", "t1", 0.25});
  CHECK(results.find("status")->as_string() == "error");
  CHECK(results.find("error")->as_string().find("ncclCommInitRankConfig") != std::string::npos);
  CHECK(results.find("rows")->as_array().empty());
  CHECK(results.find("avg_busbw_gbps")->as_number() == 0);
}

TEST_CASE("nccl check: without NCCL or without a GPU it fails fast and clearly", "[nccl]") {
  if (boot::path_exists("/dev/nvidia0")) {
    SUCCEED("a GPU is present: the gpu-labelled test runs the real sweep");
    return;
  }
  TempDir dir;
  boot::Json overrides = boot::Json::object();
  overrides.set("nnodes", 1);
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  std::string results = dir.path() + "/results/env.json";  // its folder is created
  BootProcess check = boot_test::start_boot(
      dir, "check", {"--config", config, "--node-rank", "0", "--nccl-check", "--results", results});
  REQUIRE(boot_test::wait_exit(check, 60));
  INFO(check.err());
  // Either way rank 0 leaves an error document, in the file and as the pod-log line.
  auto parsed = boot::parse_json(boot_test::slurp(results));
  REQUIRE(parsed.value);
  CHECK(parsed.value->find("status")->as_string() == "error");
  CHECK_FALSE(parsed.value->find("error")->as_string().empty());
  CHECK(check.out().rfind("MLENV_RESULTS {", 0) == 0);
  if (!boot::nccl_check_built()) {
    CHECK(check.exit_code == boot::kExitConfigError);
    CHECK(check.err().find("built without NCCL") != std::string::npos);
    return;
  }
  CHECK(check.exit_code == boot::kExitNcclCheckError);
  CHECK(check.err().find("error: nccl check error") != std::string::npos);
}

TEST_CASE("nccl check: an acceptance run RDMA cannot serve says why in results.json", "[nccl]") {
  TempDir dir;
  dir.mkdir("sys");
  dir.mkdir("dev");
  boot::Json overrides = boot::Json::object();
  overrides.set("nnodes", 1).set("transport", "rdma");
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  std::string results = dir.path() + "/results.json";
  BootProcess check = boot_test::start_boot(
      dir, "check",
      {"--config", config, "--node-rank", "0", "--nccl-check", "--results", results, "--sysfs-root",
       dir.path() + "/sys", "--dev-root", dir.path() + "/dev"});
  REQUIRE(boot_test::wait_exit(check, 30));
  INFO(check.err());
  auto parsed = boot::parse_json(boot_test::slurp(results));
  REQUIRE(parsed.value);
  CHECK(parsed.value->find("status")->as_string() == "error");
  CHECK(check.out().rfind("MLENV_RESULTS {", 0) == 0);
  if (!boot::nccl_check_built()) {
    CHECK(check.exit_code == boot::kExitConfigError);
    return;
  }
  CHECK(check.exit_code == boot::kExitTransport);
  CHECK(parsed.value->find("error")->as_string() ==
        "transport rdma is required but node 0 (env-0.env-headless.ns.svc) cannot use RDMA: no "
        "RDMA device");
}
