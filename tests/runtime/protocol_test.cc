#include <catch2/catch.hpp>

#include <poll.h>

#include "config.h"
#include "discovery.h"
#include "exit_code.h"
#include "harness.h"
#include "rendezvous.h"

using boot::Json;
using boot_test::BootProcess;
using boot_test::TempDir;

namespace {

// Joins a running rank 0 by hand and returns its first answer.
Json answer_to(int port, const Json& join) {
  boot::Fd fd =
      boot::connect_with_retry({"127.0.0.1", port}, boot::Clock::now() + std::chrono::seconds(5));
  boot::LineConnection connection(std::move(fd));
  REQUIRE(connection.send(join));
  std::vector<Json> messages;
  for (int i = 0; i < 500 && messages.empty(); ++i) {
    pollfd entry{connection.fd(), POLLIN, 0};
    ::poll(&entry, 1, 10);
    if (!connection.receive(messages) && messages.empty()) break;
  }
  REQUIRE_FALSE(messages.empty());
  return messages.front();
}

}  // namespace

TEST_CASE(
    "protocol: rank 0 rejects duplicates, out-of-range ranks, other versions and other "
    "jobs",
    "[rendezvous]") {
  TempDir dir;
  Json overrides = Json::object();
  overrides.set("nnodes", 3);
  Json document = boot_test::test_config(overrides);
  std::string path = boot_test::write_config(dir, document);
  boot::BootConfig config = boot::load_config(path);
  int port = boot_test::free_port();
  BootProcess rank0 =
      boot_test::start_boot(dir, "r0",
                            {"--config", path, "--rdzv", "127.0.0.1:" + std::to_string(port),
                             "--node-rank", "0", "--timeout", "3s", "--dry-run"});

  boot::JoinRequest request;
  request.job = config.job;
  request.token = boot_test::kTestJobToken;
  request.nnodes = 3;
  request.nproc_per_node = 1;
  request.report = {1, "127.0.0.1", false, "no RDMA device", 0};

  auto refused = [&](const Json& join, const std::string& why) {
    Json answer = answer_to(port, join);
    INFO(answer.dump());
    CHECK(answer.find("t")->as_string() == "reject");
    CHECK(answer.find("why")->as_string().find(why) != std::string::npos);
  };
  boot::JoinRequest out_of_range = request;
  out_of_range.report.rank = 3;
  refused(boot::join_to_json(out_of_range), "out of range");
  boot::JoinRequest rank_zero = request;
  rank_zero.report.rank = 0;
  refused(boot::join_to_json(rank_zero), "out of range");
  Json old_version = boot::join_to_json(request);
  old_version.set("v", boot::kProtocolVersion + 1);
  refused(old_version, "protocol version");
  boot::JoinRequest other_job = request;
  other_job.job = "test/other";
  refused(boot::join_to_json(other_job), "foreign job");
  boot::JoinRequest other_shape = request;
  other_shape.nproc_per_node = 8;
  refused(boot::join_to_json(other_shape), "nproc_per_node differs");

  // Rank 1 joins for real (and holds its place); a second rank 1 is a duplicate.
  boot::Fd first =
      boot::connect_with_retry({"127.0.0.1", port}, boot::Clock::now() + std::chrono::seconds(5));
  boot::LineConnection holder(std::move(first));
  REQUIRE(holder.send(boot::join_to_json(request)));
  refused(boot::join_to_json(request), "already joined");

  // Rank 2 never comes: rank 0 tells the member that did and fails with the timeout code.
  REQUIRE(boot_test::wait_exit(rank0, 10));
  CHECK(rank0.exit_code == boot::kExitRendezvousTimeout);
  // Its joining gave the others another deadline, which it was told ({"t":"wait"}) first.
  std::vector<Json> messages;
  while (holder.receive(messages) &&
         (messages.empty() || messages.back().find("t")->as_string() != "timeout")) {
  }
  REQUIRE(messages.size() == 2);
  CHECK(messages.front().find("t")->as_string() == "wait");
  CHECK(messages.back().find("t")->as_string() == "timeout");
}
