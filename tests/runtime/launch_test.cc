#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <thread>

#include "exit_code.h"
#include "harness.h"
#include "launch.h"
#include "util.h"

using boot::Json;
using boot::NodeShape;
using boot_test::BootProcess;
using boot_test::TempDir;

namespace {

const NodeShape kShape{2, 1, "env-0.env-headless.ns.svc", 29500, 4, "/ws/.deepspeed/hostfile"};

std::vector<std::string> words(std::initializer_list<const char*> list) {
  return std::vector<std::string>(list.begin(), list.end());
}

}  // namespace

TEST_CASE("launch: torchrun gets its node-level flags right after the launcher", "[launch]") {
  // torchrun's flags: docs.pytorch.org/docs/stable/elastic/run.html ("--nnodes", "--node_rank",
  // "--master_addr", "--master_port", "--nproc_per_node").
  CHECK(boot::launcher_argv("torchrun", words({"torchrun", "train.py", "--lr", "0.1"}), kShape) ==
        words({"torchrun", "--nnodes=2", "--node_rank=1", "--master_addr=env-0.env-headless.ns.svc",
               "--master_port=29500", "--nproc_per_node=4", "train.py", "--lr", "0.1"}));
  // `python -m torch.distributed.run` is torchrun too; its prefix is three words.
  CHECK(boot::launcher_argv(
            "torchrun", words({"/usr/bin/python3", "-m", "torch.distributed.run", "t.py"}),
            kShape) == words({"/usr/bin/python3", "-m", "torch.distributed.run", "--nnodes=2",
                              "--node_rank=1", "--master_addr=env-0.env-headless.ns.svc",
                              "--master_port=29500", "--nproc_per_node=4", "t.py"}));
}

TEST_CASE("launch: boot.json's launcher_words put the node flags after a kept wrapper",
          "[launch]") {
  // Issue 31 item 6: mlenvc counts `env X=1` and `uv run` into the prefix; mlenv-boot keeps
  // them and inserts after the launcher's own words.
  CHECK(boot::launcher_argv("torchrun", words({"env", "X=1", "uv", "run", "torchrun", "t.py"}),
                            kShape,
                            5) == words({"env", "X=1", "uv", "run", "torchrun", "--nnodes=2",
                                         "--node_rank=1", "--master_addr=env-0.env-headless.ns.svc",
                                         "--master_port=29500", "--nproc_per_node=4", "t.py"}));
  auto config_of = [](const char* overrides) {
    return boot::parse_config(boot_test::test_config(*boot::parse_json(overrides).value).dump());
  };
  CHECK(config_of(R"({"command": ["env", "X=1", "python3", "-m", "deepspeed.launcher.runner",
                      "t.py"], "launcher": "deepspeed", "launcher_words": 5})")
            .launcher_words == 5);
  // More words than the command has is a config error.
  CHECK_THROWS(config_of(
      R"({"command": ["torchrun", "t.py"], "launcher": "torchrun", "launcher_words": 3})"));
}

TEST_CASE("launch: deepspeed runs without ssh, accelerate counts every process", "[launch]") {
  // deepspeed/launcher/runner.py: the world from --hostfile (without one, --num_nodes > 1 is
  // refused), --no_ssh, --num_nodes, --node_rank, --master_addr, --master_port, --num_gpus (a
  // no-ssh launch starts this node's share only).
  CHECK(boot::launcher_argv("deepspeed", words({"deepspeed", "train.py"}), kShape) ==
        words({"deepspeed", "--hostfile=/ws/.deepspeed/hostfile", "--no_ssh", "--num_nodes=2",
               "--node_rank=1", "--master_addr=env-0.env-headless.ns.svc", "--master_port=29500",
               "--num_gpus=4", "train.py"}));
  // accelerate launch: --num_machines, --machine_rank, --main_process_ip, --main_process_port,
  // and --num_processes over all machines (huggingface.co/docs/accelerate, "accelerate launch").
  CHECK(boot::launcher_argv("accelerate", words({"accelerate", "launch", "train.py"}), kShape) ==
        words({"accelerate", "launch", "--num_machines=2", "--machine_rank=1",
               "--main_process_ip=env-0.env-headless.ns.svc", "--main_process_port=29500",
               "--num_processes=8", "train.py"}));
}

TEST_CASE("launch: a launcher's environment has the node, not the workers' ranks", "[launch]") {
  boot::NodeEnvironment env;
  env.common = {{"NCCL_IB_DISABLE", "1"}, {"MASTER_ADDR", "env-0.env-headless.ns.svc"},
                {"MASTER_PORT", "29500"}, {"WORLD_SIZE", "8"},
                {"GROUP_RANK", "1"},      {"TORCHELASTIC_USE_AGENT_STORE", "False"},
                {"OMP_NUM_THREADS", "1"}};
  // RANK from a PyTorchJob is a node rank; a launcher must not see it as a worker rank.
  boot::EnvMap user = {{"HOME", "/root"}, {"RANK", "1"}, {"LOCAL_RANK", "0"}};
  boot::EnvMap out = boot::launcher_environment(user, env, kShape);
  CHECK(out == boot::EnvMap{{"HOME", "/root"},
                            {"MASTER_ADDR", "env-0.env-headless.ns.svc"},
                            {"MASTER_PORT", "29500"},
                            {"NCCL_IB_DISABLE", "1"},
                            {"NNODES", "2"},
                            {"NODE_RANK", "1"},
                            {"OMP_NUM_THREADS", "1"}});
}

TEST_CASE("launch: services start on node 0 only, workers without a launcher one per GPU",
          "[launch]") {
  boot::BootConfig config = boot::parse_config(boot_test::test_config(*boot::parse_json(R"({
        "nproc_per_node": 3,
        "services": [{"name": "vscode", "argv": ["code-server"]}]})")
                                                                           .value)
                                                   .dump());
  boot::JobPlan plan;
  plan.nnodes = 2;
  plan.nproc_per_node = 3;
  plan.hosts = {"a", "b"};
  plan.master_addr = "a";
  plan.master_port = 29500;
  boot::NodeEnvironment env =
      boot::build_environment(config, plan, 0, boot::ProbeResult{}, "lo", {});
  boot::LaunchSpec rank0 =
      boot::plan_launch(config, words({"python", "train.py"}), "", plan, 0, {}, env);
  CHECK(rank0.workers.size() == 3);
  CHECK(rank0.workers[2].env.at("LOCAL_RANK") == "2");
  REQUIRE(rank0.services.size() == 1);
  CHECK(rank0.services[0].name == "service vscode");
  boot::NodeEnvironment env1 =
      boot::build_environment(config, plan, 1, boot::ProbeResult{}, "lo", {});
  boot::LaunchSpec rank1 =
      boot::plan_launch(config, words({"torchrun", "train.py"}), "torchrun", plan, 1, {}, env1);
  CHECK(rank1.services.empty());
  REQUIRE(rank1.workers.size() == 1);
  CHECK(rank1.workers[0].name == "launcher torchrun");
  CHECK(rank1.workers[0].argv[2] == "--node_rank=1");
}

TEST_CASE("launch: a stub torchrun starts exactly once per node with the node's arguments",
          "[launch]") {
  TempDir dir;
  // The stub records its arguments and environment in a file named after its pid, so a second
  // start on one node would leave a second file.
  dir.write("bin/torchrun",
            "#!/bin/sh\n"
            "out=" +
                dir.path() +
                "/calls/$NODE_RANK.$$\n"
                "for arg in \"$@\"; do printf '%s\\n' \"$arg\"; done > \"$out.argv\"\n"
                "env > \"$out.env\"\n");
  REQUIRE(::chmod((dir.path() + "/bin/torchrun").c_str(), 0755) == 0);
  dir.mkdir("calls");
  Json overrides = Json::object();
  Json command = Json::array();
  command.push("torchrun").push("train.py").push("--lr").push("0.1");
  overrides.set("nnodes", 2)
      .set("nproc_per_node", 4)
      .set("command", command)
      .set("launcher", "torchrun");
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  int port = boot_test::free_port();
  std::map<std::string, std::string> env = {
      {"PATH", dir.path() + "/bin:" + boot::read_environ()["PATH"]}, {"RANK", "3"}};
  std::vector<BootProcess> nodes;
  for (int rank = 0; rank < 2; ++rank) {
    nodes.push_back(
        boot_test::start_boot(dir, "n" + std::to_string(rank),
                              {"--config", config, "--rdzv", "127.0.0.1:" + std::to_string(port),
                               "--node-rank", std::to_string(rank)},
                              env));
  }
  for (BootProcess& node : nodes) {
    REQUIRE(boot_test::wait_exit(node, 15));
    INFO(node.err());
    CHECK(node.exit_code == 0);
  }
  std::vector<std::string> calls = boot::list_dir(dir.path() + "/calls");
  REQUIRE(calls.size() == 4);  // one .argv and one .env per node: one start per node
  for (int rank = 0; rank < 2; ++rank) {
    std::string r = std::to_string(rank);
    std::string prefix = dir.path() + "/calls/" + calls[static_cast<size_t>(2 * rank)];
    REQUIRE(calls[static_cast<size_t>(2 * rank)].starts_with(r + "."));
    prefix = prefix.substr(0, prefix.size() - std::string(".argv").size());
    CHECK(boot_test::slurp(prefix + ".argv") ==
          "--nnodes=2\n--node_rank=" + r +
              "\n--master_addr=127.0.0.1\n--master_port=29500\n--nproc_per_node=4\ntrain.py\n"
              "--lr\n0.1\n");
    std::map<std::string, std::string> seen = boot_test::read_env_file(prefix + ".env");
    CHECK(seen["NODE_RANK"] == r);
    CHECK(seen["NNODES"] == "2");
    CHECK(seen["MASTER_ADDR"] == "127.0.0.1");
    CHECK(seen["MASTER_PORT"] == "29500");
    CHECK(seen["NCCL_IB_DISABLE"] == "1");
    CHECK(seen.count("RANK") == 0);  // the user's RANK=3 is not a worker rank
    CHECK(seen.count("LOCAL_RANK") == 0);
    CHECK(seen.count("WORLD_SIZE") == 0);
  }
}

TEST_CASE("launch: a dev env runs its services on node 0 and keeps every node up", "[launch]") {
  TempDir dir;
  Json service = Json::object();
  Json argv = Json::array();
  argv.push("sh").push("-c").push("touch " + dir.path() + "/svc.$GROUP_RANK; exec sleep 30");
  service.set("name", "vscode").set("argv", argv);
  Json services = Json::array();
  services.push(service);
  Json overrides = Json::object();
  overrides.set("nnodes", 2).set("services", services);
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  int port = boot_test::free_port();
  std::vector<BootProcess> nodes;
  for (int rank = 0; rank < 2; ++rank) {
    nodes.push_back(
        boot_test::start_boot(dir, "n" + std::to_string(rank),
                              {"--config", config, "--rdzv", "127.0.0.1:" + std::to_string(port),
                               "--node-rank", std::to_string(rank)}));
  }
  REQUIRE(boot_test::wait_for_file(dir.path() + "/svc.0", 10));
  // Longer than three heartbeats (0.5 s each): an idle node that left would show as peer loss.
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  CHECK_FALSE(boot::path_exists(dir.path() + "/svc.1"));
  CHECK(boot_test::pid_alive(nodes[0].pid));
  CHECK(boot_test::pid_alive(nodes[1].pid));
  CHECK(nodes[1].err().find("services run on node 0 only") != std::string::npos);
  // Stopping rank 0 (as a rollout or an eviction does) stops the idle node too, which exits
  // kExitPeerLost: a node taken away is no failure of the others, and the Job's pod failure
  // policy ignores that code (targets/kube/workload.cc).
  ::kill(nodes[0].pid, SIGTERM);
  for (BootProcess& node : nodes) REQUIRE(boot_test::wait_exit(node, 10));
  CHECK(nodes[0].exit_code == 128 + SIGTERM);
  CHECK(nodes[1].exit_code == 76);
}

TEST_CASE("launch: the dry-run plan shows the launcher's exact argv", "[launch]") {
  TempDir dir;
  Json command = Json::array();
  command.push("deepspeed").push("train.py");
  Json overrides = Json::object();
  overrides.set("nnodes", 1)
      .set("nproc_per_node", 2)
      .set("command", command)
      .set("launcher", "deepspeed");
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  BootProcess node =
      boot_test::start_boot(dir, "dry", {"--config", config, "--node-rank", "0", "--dry-run"});
  REQUIRE(boot_test::wait_exit(node, 10));
  INFO(node.err());
  REQUIRE(node.exit_code == 0);
  Json plan = *boot::parse_json(node.out()).value;
  const Json::Array& launch = plan.find("launch")->as_array();
  REQUIRE(launch.size() == 1);
  CHECK(launch[0].find("name")->as_string() == "launcher deepspeed");
  std::vector<std::string> argv;
  for (const Json& arg : launch[0].find("argv")->as_array()) argv.push_back(arg.as_string());
  CHECK(argv == words({"deepspeed", "--no_ssh", "--num_nodes=1", "--node_rank=0",
                       "--master_addr=env-0.env-headless.ns.svc", "--master_port=29500",
                       "--num_gpus=2", "train.py"}));
}
