#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <regex>
#include <set>

#include "config.h"
#include "environment.h"
#include "harness.h"
#include "plan.h"

using boot::BootConfig;
using boot::JobPlan;
using boot::NodeReport;
using boot::ProbeResult;
using boot::RdmaPort;

namespace {

BootConfig config(const char* transport) {
  boot::Json overrides = boot::Json::object();
  overrides.set("transport", transport).set("nnodes", 3).set("nproc_per_node", 4);
  return boot::parse_config(boot_test::test_config(overrides).dump());
}

std::vector<NodeReport> reports(bool rdma_everywhere) {
  std::vector<NodeReport> out;
  for (int rank = 0; rank < 3; ++rank) {
    bool usable = rdma_everywhere || rank != 2;
    out.push_back({rank, "env-" + std::to_string(rank) + ".env-headless.ns.svc", usable,
                   usable ? "usable ports mlx5_2:1" : "no RDMA device", 4});
  }
  return out;
}

ProbeResult roce_probe() {
  ProbeResult probe;
  RdmaPort a;
  a.device = "mlx5_1";
  a.link_layer = "Ethernet";
  a.gid_index = 3;
  a.usable = true;
  RdmaPort b = a;
  b.device = "mlx5_10";
  RdmaPort down = a;
  down.device = "mlx5_11";
  down.usable = false;
  probe.ports = {a, b, down};
  probe.rdma_usable = true;
  return probe;
}

}  // namespace

TEST_CASE("plan: RDMA only if every node can use it", "[plan]") {
  JobPlan all = boot::decide_plan(config("rdma"), reports(true), "test/env");
  CHECK(all.transport == "rdma");
  CHECK(all.transport_error.empty());
  // "rdma" never degrades: the plan carries the failure every node ends with.
  JobPlan required = boot::decide_plan(config("rdma"), reports(false), "test/env");
  CHECK(required.transport_error ==
        "transport rdma is required but node 2 (env-2.env-headless.ns.svc) cannot use RDMA: no "
        "RDMA device");
  // "auto" falls back and says which node forced it.
  JobPlan mixed = boot::decide_plan(config("auto"), reports(false), "test/env");
  CHECK(mixed.transport == "tcp");
  CHECK(mixed.transport_error.empty());
  CHECK(mixed.transport_reason ==
        "falling back to TCP: node 2 (env-2.env-headless.ns.svc) cannot use RDMA: no RDMA device");
  CHECK(boot::decide_plan(config("auto"), reports(true), "test/env").transport == "rdma");
  JobPlan asked_tcp = boot::decide_plan(config("tcp"), reports(true), "test/env");
  CHECK(asked_tcp.transport == "tcp");
  CHECK(all.master_addr == "env-0.env-headless.ns.svc");
  CHECK(all.world_size() == 12);

  JobPlan again = boot::plan_from_json(boot::plan_to_json(required));
  CHECK(boot::plan_to_json(again) == boot::plan_to_json(required));
  CHECK(again.transport_error == required.transport_error);
}

TEST_CASE("environment: RDMA plan exports exact-match HCAs and socket interface", "[env]") {
  JobPlan plan = boot::decide_plan(config("rdma"), reports(true), "test/env");
  boot::NodeEnvironment env =
      boot::build_environment(config("rdma"), plan, 1, roce_probe(), "eth0", {});
  CHECK(env.common.at("NCCL_IB_DISABLE") == "0");
  CHECK(env.common.at("NCCL_IB_HCA") == "=mlx5_1:1,mlx5_10:1");
  CHECK(env.common.at("NCCL_SOCKET_IFNAME") == "=eth0");
  CHECK(env.common.count("NCCL_IB_GID_INDEX") == 0);   // NCCL >= 2.21 picks it itself
  CHECK(env.common.count("NCCL_NET_GDR_LEVEL") == 0);  // only when configured

  boot::NodeEnvironment old_nccl =
      boot::build_environment(config("rdma"), plan, 1, roce_probe(), "eth0", {}, true);
  CHECK(old_nccl.common.at("NCCL_IB_GID_INDEX") == "3");

  BootConfig configured = config("rdma");
  configured.gid_index = 5;
  configured.gdr_level = "PHB";
  boot::NodeEnvironment forced =
      boot::build_environment(configured, plan, 1, roce_probe(), "eth0", {});
  CHECK(forced.common.at("NCCL_IB_GID_INDEX") == "5");
  CHECK(forced.common.at("NCCL_NET_GDR_LEVEL") == "PHB");
}

TEST_CASE("environment: TCP plan disables IB and never names HCAs", "[env]") {
  JobPlan plan = boot::decide_plan(config("auto"), reports(false), "test/env");
  boot::NodeEnvironment env =
      boot::build_environment(config("rdma"), plan, 0, roce_probe(), "eth0", {});
  CHECK(env.common.at("NCCL_IB_DISABLE") == "1");
  CHECK(env.common.count("NCCL_IB_HCA") == 0);
  CHECK(env.common.at("NCCL_SOCKET_IFNAME") == "=eth0");
}

TEST_CASE("environment: the user's own settings are never overridden", "[env]") {
  JobPlan plan = boot::decide_plan(config("rdma"), reports(true), "test/env");
  boot::EnvMap user = {{"NCCL_IB_HCA", "mlx5_0"},
                       {"NCCL_DEBUG", "INFO"},
                       {"OMP_NUM_THREADS", "8"},
                       {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"},
                       {"RANK", "1"},  // a PyTorchJob's node rank: replaced
                       {"HOME", "/root"}};
  boot::NodeEnvironment env =
      boot::build_environment(config("rdma"), plan, 1, roce_probe(), "eth0", user);
  CHECK(env.common.at("NCCL_IB_HCA") == "mlx5_0");
  CHECK(env.common.at("NCCL_DEBUG") == "INFO");
  CHECK(env.common.at("OMP_NUM_THREADS") == "8");
  CHECK(env.common.at("TORCH_NCCL_ASYNC_ERROR_HANDLING") == "3");
  CHECK(env.kept_from_user == std::vector<std::string>{"NCCL_DEBUG", "NCCL_IB_HCA",
                                                       "OMP_NUM_THREADS",
                                                       "TORCH_NCCL_ASYNC_ERROR_HANDLING"});
  boot::EnvMap worker = boot::worker_environment(user, env, 2);
  CHECK(worker.at("RANK") == "6");
  CHECK(worker.at("LOCAL_RANK") == "2");
  CHECK(worker.at("HOME") == "/root");
  CHECK(worker.at("NCCL_IB_HCA") == "mlx5_0");
}

TEST_CASE("environment: torchrun's variables", "[env]") {
  JobPlan plan = boot::decide_plan(config("tcp"), reports(true), "test/env");
  boot::NodeEnvironment env =
      boot::build_environment(config("tcp"), plan, 2, ProbeResult{}, "eth0", {});
  const std::map<std::string, std::string> expected = {{"MASTER_ADDR", "env-0.env-headless.ns.svc"},
                                                       {"MASTER_PORT", "29500"},
                                                       {"WORLD_SIZE", "12"},
                                                       {"LOCAL_WORLD_SIZE", "4"},
                                                       {"GROUP_RANK", "2"},
                                                       {"GROUP_WORLD_SIZE", "3"},
                                                       {"ROLE_NAME", "default"},
                                                       {"ROLE_WORLD_SIZE", "12"},
                                                       {"TORCHELASTIC_RESTART_COUNT", "0"},
                                                       {"TORCHELASTIC_MAX_RESTARTS", "0"},
                                                       {"TORCHELASTIC_RUN_ID", "test/env"},
                                                       {"TORCHELASTIC_USE_AGENT_STORE", "False"},
                                                       {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
                                                       {"OMP_NUM_THREADS", "1"},
                                                       {"CROSS_RANK", "2"},
                                                       {"CROSS_SIZE", "3"},
                                                       {"LOCAL_SIZE", "4"}};
  for (const auto& [name, value] : expected) {
    INFO(name);
    CHECK(env.common.at(name) == value);
  }
  REQUIRE(env.per_worker.size() == 4);
  CHECK(env.per_worker[3].at("RANK") == "11");
  CHECK(env.per_worker[3].at("ROLE_RANK") == "11");
  CHECK(env.per_worker[3].at("LOCAL_RANK") == "3");
}

TEST_CASE("environment: hostfile and .deepspeed_env parse the way DeepSpeed parses them", "[env]") {
  JobPlan plan = boot::decide_plan(config("rdma"), reports(true), "test/env");
  boot::NodeEnvironment env =
      boot::build_environment(config("rdma"), plan, 0, roce_probe(), "eth0", {});
  std::regex slots(R"(^(\S+)\s+slots=(\d+))");
  std::set<std::string> hosts;
  REQUIRE(env.hostfile_lines.size() == 3);
  for (size_t i = 0; i < env.hostfile_lines.size(); ++i) {
    std::smatch match;
    REQUIRE(std::regex_search(env.hostfile_lines[i], match, slots));
    CHECK(match[1] == "env-" + std::to_string(i) + ".env-headless.ns.svc");
    CHECK(match[2] == "4");
    hosts.insert(match[1]);
  }
  CHECK(hosts.size() == 3);
  bool saw_hca = false;
  for (const std::string& line : env.deepspeed_env_lines) {
    size_t equals = line.find('=');
    REQUIRE(equals != std::string::npos);
    CHECK(line.substr(0, 5) == "NCCL_");
    if (line.substr(0, equals) == "NCCL_IB_HCA") {
      CHECK(line.substr(equals + 1) == "=mlx5_1:1,mlx5_10:1");
      saw_hca = true;
    }
  }
  CHECK(saw_hca);

  boot_test::TempDir dir;
  BootConfig with_paths = config("rdma");
  with_paths.hostfile = dir.path() + "/deep/er/hostfile";
  with_paths.deepspeed_env = dir.path() + "/.deepspeed_env";
  boot::write_job_files(with_paths, env);
  CHECK(boot_test::slurp(with_paths.hostfile) ==
        "env-0.env-headless.ns.svc slots=4\nenv-1.env-headless.ns.svc slots=4\n"
        "env-2.env-headless.ns.svc slots=4\n");
  CHECK(boot_test::slurp(with_paths.deepspeed_env).find("NCCL_IB_HCA==mlx5_1:1,mlx5_10:1\n") !=
        std::string::npos);
}

TEST_CASE("environment: the socket interface", "[env]") {
  auto exists = [](const std::string& name) { return name == "eth1"; };
  CHECK(boot::choose_socket_interface({}, "eth0", exists) == "eth0");
  CHECK(boot::choose_socket_interface({"eth0", "eth1"}, "eth0", exists) == "eth0");
  CHECK(boot::choose_socket_interface({"net9", "eth1"}, "eth0", exists) == "eth1");
  CHECK(boot::choose_socket_interface({"net9"}, "eth0", exists) == "eth0");
}

TEST_CASE("environment: shell_env exports the job's variables for login shells", "[env]") {
  JobPlan plan = boot::decide_plan(config("rdma"), reports(true), "test/env");
  // A user value with a quote must survive `.`/source unchanged (POSIX sh single quotes).
  boot::EnvMap user = {{"NCCL_DEBUG", "it's"}};
  boot::NodeEnvironment env =
      boot::build_environment(config("rdma"), plan, 1, roce_probe(), "eth0", user);
  std::vector<std::string> lines = boot::shell_env_lines(env, plan, 1);
  CHECK(lines == std::vector<std::string>{
                     "export MASTER_ADDR='env-0.env-headless.ns.svc'",
                     "export MASTER_PORT='29500'",
                     "export MLENV_TRANSPORT='rdma'",
                     "export NCCL_DEBUG='it'\\''s'",
                     "export NCCL_IB_DISABLE='0'",
                     "export NCCL_IB_HCA='=mlx5_1:1,mlx5_10:1'",
                     "export NCCL_SOCKET_IFNAME='=eth0'",
                     "export NNODES='3'",
                     "export NODE_RANK='1'",
                     "export NPROC_PER_NODE='4'",
                     "export WORLD_SIZE='12'",
                 });

  boot_test::TempDir dir;
  std::string path = dir.path() + "/run/mlenv/env.sh";  // its folders do not exist yet
  ::umask(077);  // the file is 0644 whatever the umask: other users' shells read it
  boot::write_shell_env(path, lines);
  ::umask(022);
  struct stat info = {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0644);
  // What a shell makes of it, quote included.
  std::string script =
      "sh -c '. " + path + " && printf %s \"$NCCL_DEBUG|$NODE_RANK\"' > " + dir.path() + "/seen";
  REQUIRE(std::system(script.c_str()) == 0);
  CHECK(boot_test::slurp(dir.path() + "/seen") == "it's|1");
}
