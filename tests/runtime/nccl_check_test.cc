#include <catch2/catch.hpp>

#include "exit_code.h"
#include "harness.h"
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

TEST_CASE("nccl check: results.json carries rows, average, threshold and status", "[nccl]") {
  boot::NcclCheckRequest request;
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
  boot::Json results =
      boot::results_to_json(request, {row}, "pass", "", "2026-01-01T00:00:00Z", "later");
  auto reparsed = boot::parse_json(results.pretty());
  REQUIRE(reparsed.value);
  const boot::Json& json = *reparsed.value;
  CHECK(json.find("world")->as_int() == 8);
  CHECK(json.find("transport")->as_string() == "rdma");
  CHECK(json.find("status")->as_string() == "pass");
  CHECK(json.find("min_busbw_GBps")->as_number() == 5);
  REQUIRE(json.find("rows")->as_array().size() == 1);
  const boot::Json& first = json.find("rows")->as_array()[0];
  CHECK(first.find("bytes")->as_int() == 1024);
  CHECK(first.find("busbw_GBps")->as_number() == Approx(0.1792));
  CHECK(json.find("avg_busbw_GBps")->as_number() == Approx(0.1792));
  CHECK(json.find("env")->find("NCCL_IB_HCA")->as_string() == "=mlx5_2:1");
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
  std::string results = dir.path() + "/results.json";
  BootProcess check = boot_test::start_boot(
      dir, "check", {"--config", config, "--node-rank", "0", "--nccl-check", "--results", results});
  REQUIRE(boot_test::wait_exit(check, 60));
  INFO(check.err());
  if (!boot::nccl_check_built()) {
    CHECK(check.exit_code == boot::kExitConfigError);
    CHECK(check.err().find("built without NCCL") != std::string::npos);
    return;
  }
  CHECK(check.exit_code == boot::kExitNcclCheckFailed);
  CHECK(check.err().find("error: nccl check error") != std::string::npos);
  auto parsed = boot::parse_json(boot_test::slurp(results));
  REQUIRE(parsed.value);
  CHECK(parsed.value->find("status")->as_string() == "error");
  CHECK_FALSE(parsed.value->find("error")->as_string().empty());
}
