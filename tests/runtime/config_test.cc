#include <catch2/catch.hpp>

#include "config.h"
#include "exit_code.h"
#include "harness.h"

using boot::BootError;
using boot::Json;

namespace {

boot::BootConfig parse(const Json& config) {
  return boot::parse_config(config.dump());
}

int error_code(const Json& config) {
  try {
    parse(config);
  } catch (const BootError& error) {
    return error.code();
  }
  return 0;
}

}  // namespace

TEST_CASE("config: reads the documented example", "[config]") {
  // The example of runtime/BOOT_CONFIG.md, verbatim.
  const char* text = R"({
  "format_version": 1,
  "job": "barcelona/ml-dev-env",
  "statefulset": "ml-dev-env",
  "headless_service": "ml-dev-env-headless",
  "namespace": "nccl-test",
  "nnodes": 2,
  "nproc_per_node": 4,
  "gpus_per_node": 4,
  "rdzv_port": 29400,
  "master_port": 29500,
  "transport": "rdma",
  "rdma": {
    "rails": [
      {"device": "mlx5_2", "interface": "net1"},
      {"device": "mlx5_3", "interface": "net2"}
    ],
    "gid_index": 3,
    "gdr_level": "SYS"
  },
  "tcp": {"interfaces": ["eth0"]},
  "timeouts": {"discovery_s": 600, "rendezvous_s": 600, "heartbeat_s": 5, "grace_s": 30},
  "command": ["python", "/workspace/train.py"],
  "services": [
    {"name": "vscode", "argv": ["code-server", "--bind-addr", "127.0.0.1:8080", "--auth", "none", "/workspace"]}
  ],
  "hostfile": "/workspace/.mlenv/hostfile",
  "deepspeed_env": "/workspace/.deepspeed_env",
  "nccl_check": {"min_busbw_gbps": 0, "max_bytes": 1073741824}
})";
  boot::BootConfig config = boot::parse_config(text);
  CHECK(config.job == "barcelona/ml-dev-env");
  CHECK(config.peer_host(3) == "ml-dev-env-3.ml-dev-env-headless.nccl-test.svc");
  CHECK(config.nnodes == 2);
  CHECK(config.nproc_per_node == 4);
  CHECK(config.transport == "rdma");
  REQUIRE(config.rails.size() == 2);
  CHECK(config.rails[1].device == "mlx5_3");
  CHECK(config.rails[1].interface == "net2");
  CHECK(config.gid_index == 3);
  CHECK(config.gdr_level == "SYS");
  CHECK(config.tcp_interfaces == std::vector<std::string>{"eth0"});
  CHECK(config.grace_s == 30);
  CHECK(config.command == std::vector<std::string>{"python", "/workspace/train.py"});
  REQUIRE(config.services.size() == 1);
  CHECK(config.services[0].argv.size() == 6);
  CHECK(config.nccl_max_bytes == 1073741824u);
  CHECK(config.digest.size() == 16);
}

TEST_CASE("config: unknown keys are ignored, unknown versions and bad values rejected",
          "[config]") {
  Json extra = boot_test::test_config();
  extra.set("a_future_key", Json::object());
  CHECK(error_code(extra) == 0);

  auto with = [](const char* key, Json value) {
    Json overrides = Json::object();
    overrides.set(key, std::move(value));
    return boot_test::test_config(overrides);
  };
  CHECK(error_code(with("format_version", 2)) == boot::kExitConfigError);
  CHECK(error_code(with("nnodes", 0)) == boot::kExitConfigError);
  CHECK(error_code(with("nproc_per_node", "4")) == boot::kExitConfigError);
  CHECK(error_code(with("transport", "ib")) == boot::kExitConfigError);
  CHECK(error_code(with("rdzv_port", 29500)) == boot::kExitConfigError);  // == master_port
  Json gdr = Json::object();
  gdr.set("gdr_level", 5);  // integers meant different things in different NCCL releases
  CHECK(error_code(with("rdma", gdr)) == boot::kExitConfigError);
  Json missing = boot_test::test_config();
  Json::Object members;
  for (const auto& [key, value] : missing.as_object()) {
    if (key != "job") members.emplace_back(key, value);
  }
  try {
    parse(Json(members));
    FAIL("a config without job was accepted");
  } catch (const BootError& error) {
    CHECK(std::string(error.what()).find("`job` is missing") != std::string::npos);
  }
  CHECK_THROWS_AS(boot::parse_config("{not json"), BootError);
}

TEST_CASE("config: durations", "[config]") {
  CHECK(boot::parse_duration("30s") == 30);
  CHECK(boot::parse_duration("500ms") == 0.5);
  CHECK(boot::parse_duration("2m") == 120);
  CHECK(boot::parse_duration("1h") == 3600);
  CHECK(boot::parse_duration("1.5") == 1.5);
  CHECK_FALSE(boot::parse_duration("s"));
  CHECK_FALSE(boot::parse_duration("-1s"));
  CHECK_FALSE(boot::parse_duration("ten"));
}
