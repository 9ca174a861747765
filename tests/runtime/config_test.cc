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
  "format_version": 3,
  "job": "barcelona/ml-dev-env",
  "rank": {"hostname_ordinal": true},
  "rendezvous": {"host": "ml-dev-env-0.ml-dev-env-headless.nccl-test.svc", "host_env": "", "port": 29400},
  "nnodes": 2,
  "nproc_per_node": 4,
  "gpus_per_node": 4,
  "master_port": 29500,
  "transport": "rdma",
  "rdma": {
    "rails": [
      {"device": "mlx5_2", "interface": "net1", "link_layer": "ethernet",
       "network": "eno5np0-network", "resource": "openshift.io/eno5np0rdma"},
      {"device": "", "interface": "net2", "link_layer": "ethernet",
       "network": "eno6np0-network", "resource": "openshift.io/eno6np0rdma"}
    ],
    "gid_index": 3,
    "gdr_level": "SYS",
    "min_memlock_bytes": 1073741824
  },
  "tcp": {"interfaces": ["eth0"]},
  "timeouts": {"discovery_s": 600, "rendezvous_s": 600, "heartbeat_s": 5, "grace_s": 30},
  "command": ["torchrun", "train.py"],
  "launcher": "torchrun",
  "services": [
    {"name": "vscode", "argv": ["code-server", "--bind-addr", "127.0.0.1:8080", "--auth", "none", "/workspace"]}
  ],
  "hostfile": "/workspace/.mlenv/hostfile",
  "deepspeed_env": "/workspace/.deepspeed_env",
  "shell_env": "/run/mlenv/env.sh",
  "network_status": "/etc/podinfo/network-status",
  "nccl_check": {"min_busbw_gbps": 40, "max_bytes": 8589934592, "timeout_s": 120}
})";
  boot::BootConfig config = boot::parse_config(text);
  CHECK(config.job == "barcelona/ml-dev-env");
  CHECK(config.rank.hostname_ordinal);
  CHECK(config.rank.env.empty());
  CHECK(config.rendezvous.host == "ml-dev-env-0.ml-dev-env-headless.nccl-test.svc");
  CHECK(config.rendezvous.host_env.empty());
  CHECK(config.rendezvous.port == 29400);
  CHECK(config.nnodes == 2);
  CHECK(config.nproc_per_node == 4);
  CHECK(config.transport == "rdma");
  REQUIRE(config.rails.size() == 2);
  CHECK(config.rails[0].device == "mlx5_2");
  CHECK(config.rails[0].link_layer == "ethernet");
  CHECK(config.rails[0].network == "eno5np0-network");
  CHECK(config.rails[0].resource == "openshift.io/eno5np0rdma");
  CHECK(config.rails[1].device.empty());  // a hint only: names are mapped per node
  CHECK(config.rails[1].interface == "net2");
  CHECK(config.min_memlock_bytes == 1073741824u);
  CHECK(config.gid_index == 3);
  CHECK(config.gdr_level == "SYS");
  CHECK(config.tcp_interfaces == std::vector<std::string>{"eth0"});
  CHECK(config.grace_s == 30);
  CHECK(config.command == std::vector<std::string>{"torchrun", "train.py"});
  CHECK(config.launcher == "torchrun");
  CHECK(config.shell_env == "/run/mlenv/env.sh");
  CHECK(config.network_status == "/etc/podinfo/network-status");
  CHECK(config.nccl_min_busbw_gbps == 40);
  CHECK(config.nccl_timeout_s == 120);
  REQUIRE(config.services.size() == 1);
  CHECK(config.services[0].argv.size() == 6);
  CHECK(config.nccl_max_bytes == 8589934592u);
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
  CHECK(error_code(with("format_version", 4)) == boot::kExitConfigError);
  CHECK(error_code(with("transport", "auto")) == 0);
  CHECK(error_code(with("launcher", "deepspeed")) == 0);
  CHECK(error_code(with("launcher", "mpirun")) == boot::kExitConfigError);
  CHECK(error_code(with("shell_env", 5)) == boot::kExitConfigError);
  CHECK(error_code(with("nnodes", 0)) == boot::kExitConfigError);
  CHECK(error_code(with("nproc_per_node", "4")) == boot::kExitConfigError);
  CHECK(error_code(with("transport", "ib")) == boot::kExitConfigError);
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

  Json bad_rail = Json::object();
  Json rails = Json::array();
  Json rail = Json::object();
  rail.set("interface", "net1").set("link_layer", "roce");
  rails.push(rail);
  bad_rail.set("rails", rails);
  CHECK(error_code(with("rdma", bad_rail)) == boot::kExitConfigError);
}

namespace {

// The message of the config error `config` raises, "" when it parses.
std::string error_text(const Json& config) {
  try {
    parse(config);
  } catch (const BootError& error) {
    CHECK(error.code() == boot::kExitConfigError);
    return error.what();
  }
  return "";
}

Json with_object(const char* key, std::initializer_list<std::pair<const char*, Json>> members) {
  Json object = Json::object();
  for (const auto& [name, value] : members) object.set(name, value);
  Json overrides = Json::object();
  overrides.set(key, std::move(object));
  return boot_test::test_config(overrides);
}

}  // namespace

TEST_CASE("config: version 3 takes the rank source and rank 0's address from the target",
          "[config]") {
  boot::BootConfig slurm = parse(
      with_object("rendezvous", {{"host", ""}, {"host_env", "MLENV_RDZV_HOST"}, {"port", 29401}}));
  CHECK(slurm.rendezvous.host_env == "MLENV_RDZV_HOST");
  CHECK(slurm.rendezvous.port == 29401);
  CHECK(parse(with_object("rank", {{"env", "SLURM_NODEID"}})).rank.env == "SLURM_NODEID");

  // Exactly one of host and host_env, exactly one rank source; each error names its key.
  CHECK(error_text(with_object("rendezvous", {{"host", "a"}, {"host_env", "B"}, {"port", 1}}))
            .find("`rendezvous` needs exactly one of `host` and `host_env`") != std::string::npos);
  CHECK(error_text(with_object("rendezvous", {{"host", ""}, {"port", 1}}))
            .find("`rendezvous` needs exactly one") != std::string::npos);
  CHECK(
      error_text(with_object("rendezvous", {{"host", "a"}})).find("`rendezvous.port` is missing") !=
      std::string::npos);
  CHECK(error_text(with_object("rendezvous", {{"host", "a"}, {"port", 29500}}))
            .find("`rendezvous.port` must differ from master_port") != std::string::npos);
  CHECK(error_text(with_object("rank", {})).find("`rank` needs exactly one") != std::string::npos);
  CHECK(error_text(with_object("rank", {{"env", "X"}, {"hostname_ordinal", true}}))
            .find("`rank` needs exactly one") != std::string::npos);
  CHECK(error_text(with_object("rank", {{"hostname_ordinal", "yes"}}))
            .find("`rank.hostname_ordinal` must be true or false") != std::string::npos);
  Json not_object = Json::object();
  not_object.set("rank", "JOB_COMPLETION_INDEX");
  CHECK(error_text(boot_test::test_config(not_object)).find("`rank` must be an object") !=
        std::string::npos);

  // Version 2's `workload` does not stand in for `rank`: the keys were replaced with the version.
  Json::Object version2;
  const Json version3 = boot_test::test_config();
  for (const auto& [key, value] : version3.as_object()) {
    if (key != "rank" && key != "rendezvous") version2.emplace_back(key, value);
  }
  version2.emplace_back("workload", Json("env"));
  CHECK(error_text(Json(version2)).find("`rank` is missing") != std::string::npos);
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
