// A job admits only its own nodes (issue 21, items 1 and 2): no rendezvous without the run's
// secret, and no node runs a plan that is not its own boot.json's.
#include <catch2/catch.hpp>

#include <future>

#include "config.h"
#include "exit_code.h"
#include "harness.h"
#include "plan.h"
#include "rendezvous.h"
#include "util.h"

using boot::Json;
using boot_test::BootProcess;
using boot_test::TempDir;

namespace {

std::string two_node_config(const TempDir& dir) {
  Json overrides = Json::object();
  overrides.set("nnodes", 2);
  return boot_test::write_config(dir, boot_test::test_config(overrides));
}

std::vector<std::string> node_args(const std::string& config, int port, int rank) {
  return {"--config",    config,
          "--rdzv",      "127.0.0.1:" + std::to_string(port),
          "--node-rank", std::to_string(rank),
          "--timeout",   "10s"};
}

// The plan rank 0 would decide for test_config's two nodes.
boot::JobPlan honest_plan() {
  boot::JobPlan plan;
  plan.nnodes = 2;
  plan.nproc_per_node = 1;
  plan.run_id = "test/env";
  plan.transport = "tcp";
  plan.transport_reason = "boot.json asks for tcp";
  plan.master_addr = "127.0.0.1";
  plan.master_port = 29500;
  plan.hosts = {"127.0.0.1", "127.0.0.1"};
  return plan;
}

}  // namespace

TEST_CASE("job token: no node of several starts without MLENV_JOB_TOKEN", "[rendezvous]") {
  TempDir dir;
  std::string config = two_node_config(dir);
  int port = boot_test::free_port();
  // Before, both derived the same token from boot.json, which anyone who can read it can too.
  for (int rank : {0, 1}) {
    std::vector<std::string> args = node_args(config, port, rank);
    args.push_back("--dry-run");
    BootProcess node =
        boot_test::start_boot(dir, "r" + std::to_string(rank), args, {{"MLENV_JOB_TOKEN", ""}});
    REQUIRE(boot_test::wait_exit(node, 15));
    INFO(node.err());
    CHECK(node.exit_code == boot::kExitConfigError);
    CHECK(node.err().find("MLENV_JOB_TOKEN is not set") != std::string::npos);
  }
  // A single node has no rendezvous to guard.
  Json single = Json::object();
  single.set("nnodes", 1);
  std::string alone = boot_test::write_config(dir, boot_test::test_config(single), "one.json");
  BootProcess solo = boot_test::start_boot(
      dir, "solo", {"--config", alone, "--node-rank", "0", "--dry-run"}, {{"MLENV_JOB_TOKEN", ""}});
  REQUIRE(boot_test::wait_exit(solo, 15));
  INFO(solo.err());
  CHECK(solo.exit_code == 0);
}

TEST_CASE("job token: a node refuses a plan that is not its boot.json's", "[rendezvous]") {
  TempDir dir;
  std::string config = two_node_config(dir);
  int port = boot_test::free_port();
  // A rank 0 that knows the token but forges the plan: 500 workers per node.
  boot::JoinRequest self;
  self.job = "test/env";
  self.token = boot_test::kTestJobToken;
  self.nnodes = 2;
  self.nproc_per_node = 1;
  self.report = {0, "127.0.0.1", false, "no RDMA device", 0};
  boot::Coordinator forger(self, port);
  std::string marker = dir.path() + "/worker-started";
  std::vector<std::string> args = node_args(config, port, 1);
  args.insert(args.end(), {"--", "sh", "-c", "touch " + marker});
  BootProcess node = boot_test::start_boot(dir, "r1", args);
  forger.gather(boot::Clock::now() + std::chrono::seconds(10));
  boot::JobPlan forged = honest_plan();
  forged.nproc_per_node = 500;
  forger.send_plan(forged);
  REQUIRE(boot_test::wait_exit(node, 15));
  INFO(node.err());
  CHECK(node.exit_code == boot::kExitConfigError);
  CHECK(node.err().find("refusing rank 0's plan: nproc_per_node 500 differs from boot.json's 1") !=
        std::string::npos);
  CHECK_FALSE(boot::path_exists(marker));
}

TEST_CASE("job token: every forged field of a plan is refused", "[rendezvous]") {
  TempDir dir;
  boot::BootConfig config = boot::load_config(two_node_config(dir));
  CHECK_FALSE(boot::plan_mismatch(config, 2, honest_plan()));
  auto refused = [&](auto&& forge, const std::string& why) {
    boot::JobPlan plan = honest_plan();
    forge(plan);
    std::optional<std::string> mismatch = boot::plan_mismatch(config, 2, plan);
    REQUIRE(mismatch);
    CHECK(mismatch->find(why) != std::string::npos);
  };
  refused([](boot::JobPlan& p) { p.nnodes = 3; }, "nnodes 3");
  refused([](boot::JobPlan& p) { p.nproc_per_node = 2000000000; }, "nproc_per_node");
  refused([](boot::JobPlan& p) { p.master_port = 22; }, "master_port 22");
  refused([](boot::JobPlan& p) { p.run_id = "other/env"; }, "job other/env");
  refused([](boot::JobPlan& p) { p.transport = "rdma"; }, "transport rdma");
  refused([](boot::JobPlan& p) { p.transport_error = "x"; }, "transport tcp");
  refused([](boot::JobPlan& p) { p.hosts[1] = "evil\nNCCL_DEBUG=INFO"; }, "hosts");
  refused([](boot::JobPlan& p) { p.master_addr = "10.9.9.9"; }, "master_addr");
  refused([](boot::JobPlan& p) { p.nccl_unique_id = "zz"; }, "NCCL id");
}
