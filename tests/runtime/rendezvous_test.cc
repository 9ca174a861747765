#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <map>
#include <random>
#include <thread>

#include "exit_code.h"
#include "harness.h"
#include "util.h"

using boot::Json;
using boot_test::BootProcess;
using boot_test::TempDir;

namespace {

Json overrides_for(int nnodes, int nproc = 1) {
  Json overrides = Json::object();
  overrides.set("nnodes", nnodes).set("nproc_per_node", nproc);
  return overrides;
}

std::vector<std::string> node_args(const std::string& config, int port, int rank,
                                   std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--config",    config,
                                   "--rdzv",      "127.0.0.1:" + std::to_string(port),
                                   "--node-rank", std::to_string(rank)};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Starts nnodes dry-run nodes in a random order (rank 0 last when asked), with small random
// gaps, and checks they all print the same plan.
void rendezvous_in_random_order(int nnodes, bool rank0_last, unsigned seed) {
  TempDir dir;
  std::string config =
      boot_test::write_config(dir, boot_test::test_config(overrides_for(nnodes, 2)));
  int port = boot_test::free_port();
  std::vector<int> order(static_cast<size_t>(nnodes));
  for (int i = 0; i < nnodes; ++i) order[static_cast<size_t>(i)] = i;
  std::mt19937 random(seed);
  std::shuffle(order.begin(), order.end(), random);
  if (rank0_last) {
    order.erase(std::find(order.begin(), order.end(), 0));
    order.push_back(0);
  }
  std::vector<BootProcess> nodes(static_cast<size_t>(nnodes));
  for (int rank : order) {
    nodes[static_cast<size_t>(rank)] = boot_test::start_boot(
        dir, "node" + std::to_string(rank), node_args(config, port, rank, {"--dry-run"}));
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 3000));
  }
  std::string transport;
  Json hostfile;
  for (int rank = 0; rank < nnodes; ++rank) {
    BootProcess& node = nodes[static_cast<size_t>(rank)];
    INFO("rank " << rank << " stderr: " << node.err());
    REQUIRE(boot_test::wait_exit(node, 30));
    REQUIRE(node.exit_code == 0);
    auto plan = boot::parse_json(node.out());
    REQUIRE(plan.value);
    CHECK(plan.value->find("node_rank")->as_int() == rank);
    CHECK(plan.value->find("world_size")->as_int() == 2 * nnodes);
    CHECK(plan.value->find("workers")->as_array()[1].find("RANK")->as_string() ==
          std::to_string(2 * rank + 1));
    if (rank == 0) {
      transport = plan.value->find("transport")->as_string();
      hostfile = *plan.value->find("hostfile");
    }
    CHECK(plan.value->find("transport")->as_string() == transport);
    CHECK(*plan.value->find("hostfile") == hostfile);
  }
  CHECK(hostfile.as_array().size() == static_cast<size_t>(nnodes));
}

}  // namespace

TEST_CASE("rendezvous: 2 nodes in random order", "[rendezvous]") {
  rendezvous_in_random_order(2, false, 1);
  rendezvous_in_random_order(2, true, 2);
}

TEST_CASE("rendezvous: 4 nodes in random order", "[rendezvous]") {
  rendezvous_in_random_order(4, false, 3);
  rendezvous_in_random_order(4, true, 4);
}

TEST_CASE("rendezvous: 16 nodes in random order", "[rendezvous]") {
  rendezvous_in_random_order(16, false, 5);
  rendezvous_in_random_order(16, true, 6);
}

TEST_CASE("rendezvous: 64 nodes in random order", "[rendezvous]") {
  rendezvous_in_random_order(64, false, 7);
  rendezvous_in_random_order(64, true, 8);
}

TEST_CASE("rendezvous: a node that never arrives fails every node by the deadline",
          "[rendezvous]") {
  TempDir dir;
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides_for(3)));
  int port = boot_test::free_port();
  double started = boot_test::now_s();
  BootProcess rank0 = boot_test::start_boot(
      dir, "r0", node_args(config, port, 0, {"--timeout", "1s", "--dry-run"}));
  BootProcess rank1 = boot_test::start_boot(
      dir, "r1", node_args(config, port, 1, {"--timeout", "1s", "--dry-run"}));
  REQUIRE(boot_test::wait_exit(rank0, 10));
  REQUIRE(boot_test::wait_exit(rank1, 10));
  CHECK(boot_test::now_s() - started < 4);
  CHECK(rank0.exit_code == boot::kExitRendezvousTimeout);
  CHECK(rank1.exit_code == boot::kExitRendezvousTimeout);
  CHECK(rank0.err().find("error: rendezvous timeout: 1 of 3 nodes never joined (ranks 2)") !=
        std::string::npos);
  CHECK(rank1.err().find("error: rendezvous timeout") != std::string::npos);

  // And when rank 0 itself never comes, the members give up at their own deadline.
  BootProcess lonely =
      boot_test::start_boot(dir, "lonely", node_args(config, port, 2, {"--timeout", "500ms"}));
  REQUIRE(boot_test::wait_exit(lonely, 10));
  CHECK(lonely.exit_code == boot::kExitRendezvousTimeout);
  CHECK(lonely.err().find("rank 0 at 127.0.0.1") != std::string::npos);
}

TEST_CASE("rendezvous: a cold start whose nodes arrive further apart than the deadline still meets",
          "[rendezvous]") {
  // Nodes pulling a large image start minutes apart. With a 1 s deadline and a node every
  // 0.7 s, the last of 7 arrives at 4.2 s: rank 0 waits 1 s from each arrival, and the early
  // members (whose own wait, 1 s + 2 s from joining, ends at 3.7 s for rank 1) wait as long as
  // rank 0 tells them to ({"t":"wait"}). Before, rank 0 gave up 1 s after its start.
  TempDir dir;
  const int nnodes = 7;
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides_for(nnodes)));
  int port = boot_test::free_port();
  std::vector<BootProcess> nodes;
  for (int rank = 0; rank < nnodes; ++rank) {
    if (rank > 0) std::this_thread::sleep_for(std::chrono::milliseconds(700));
    nodes.push_back(
        boot_test::start_boot(dir, "cold" + std::to_string(rank),
                              node_args(config, port, rank, {"--timeout", "1s", "--dry-run"})));
  }
  for (int rank = 0; rank < nnodes; ++rank) {
    BootProcess& node = nodes[static_cast<size_t>(rank)];
    INFO("rank " << rank << " stderr: " << node.err());
    REQUIRE(boot_test::wait_exit(node, 20));
    CHECK(node.exit_code == 0);
  }
}

TEST_CASE("rendezvous: a foreign token is rejected", "[rendezvous]") {
  TempDir dir;
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides_for(2)));
  int port = boot_test::free_port();
  BootProcess rank0 =
      boot_test::start_boot(dir, "r0", node_args(config, port, 0, {"--timeout", "2s", "--dry-run"}),
                            {{"MLENV_JOB_TOKEN", "job-a"}});
  BootProcess foreign = boot_test::start_boot(dir, "r1", node_args(config, port, 1, {"--dry-run"}),
                                              {{"MLENV_JOB_TOKEN", "job-b"}});
  REQUIRE(boot_test::wait_exit(foreign, 10));
  CHECK(foreign.exit_code == boot::kExitConfigError);
  CHECK(foreign.err().find("error: rejected by rank 0: foreign job") != std::string::npos);
  // The right member is still welcome after a foreign one was turned away.
  BootProcess member = boot_test::start_boot(dir, "r1b", node_args(config, port, 1, {"--dry-run"}),
                                             {{"MLENV_JOB_TOKEN", "job-a"}});
  REQUIRE(boot_test::wait_exit(member, 10));
  REQUIRE(boot_test::wait_exit(rank0, 10));
  CHECK(member.exit_code == 0);
  CHECK(rank0.exit_code == 0);
}

namespace {

// A RoCE node: mlx5_2 with the mlx5 GID layout, IPC_LOCK, uverbs; and a node with no HCA at all.
void rdma_and_plain_trees(const TempDir& dir) {
  std::string port = "roce/sys/class/infiniband/mlx5_2/ports/1/";
  dir.write(port + "state", "4: ACTIVE\n");
  dir.write(port + "link_layer", "Ethernet\n");
  const char* gids[] = {
      "fe80:0000:0000:0000:0a88:66ff:fe11:2233", "fe80:0000:0000:0000:0a88:66ff:fe11:2233",
      "0000:0000:0000:0000:0000:ffff:0a00:0107", "0000:0000:0000:0000:0000:ffff:0a00:0107"};
  const char* types[] = {"IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2"};
  for (int i = 0; i < 4; ++i) {
    dir.write(port + "gids/" + std::to_string(i), std::string(gids[i]) + "\n");
    dir.write(port + "gid_attrs/types/" + std::to_string(i), std::string(types[i]) + "\n");
    dir.write(port + "gid_attrs/ndevs/" + std::to_string(i), "net1\n");
  }
  dir.write("roce/dev/infiniband/uverbs0", "");
  dir.write("roce/proc/self/status", "CapEff:\t00000000a80445fb\n");
  dir.write("plain/proc/self/status", "CapEff:\t00000000a80445fb\n");
  dir.mkdir("plain/sys");
  dir.mkdir("plain/dev");
}

// Four dry-run nodes on loopback; node 2 runs on the plain tree when `one_plain`.
std::vector<BootProcess> four_nodes(const TempDir& dir, const std::string& transport,
                                    bool one_plain) {
  Json overrides = overrides_for(4);
  overrides.set("transport", transport);
  std::string config =
      boot_test::write_config(dir, boot_test::test_config(overrides), transport + ".json");
  int port = boot_test::free_port();
  std::vector<BootProcess> nodes;
  for (int rank = 0; rank < 4; ++rank) {
    std::string tree = dir.path() + "/" + (one_plain && rank == 2 ? "plain" : "roce");
    nodes.push_back(boot_test::start_boot(
        dir, transport + std::to_string(one_plain) + "n" + std::to_string(rank),
        node_args(config, port, rank,
                  {"--dry-run", "--sysfs-root", tree + "/sys", "--proc-root", tree + "/proc",
                   "--dev-root", tree + "/dev"})));
  }
  return nodes;
}

}  // namespace

TEST_CASE("rendezvous: auto falls back to TCP on every node when one node lacks RDMA, and says so",
          "[rendezvous]") {
  TempDir dir;
  rdma_and_plain_trees(dir);
  for (bool one_plain : {false, true}) {
    std::vector<BootProcess> nodes = four_nodes(dir, "auto", one_plain);
    for (int rank = 0; rank < 4; ++rank) {
      BootProcess& node = nodes[static_cast<size_t>(rank)];
      INFO("rank " << rank << ": " << node.err());
      REQUIRE(boot_test::wait_exit(node, 15));
      REQUIRE(node.exit_code == 0);
      Json plan = *boot::parse_json(node.out()).value;
      const Json& env = *plan.find("environment");
      if (one_plain) {
        CHECK(plan.find("transport")->as_string() == "tcp");
        CHECK(plan.find("transport_reason")->as_string().find("node 2") != std::string::npos);
        CHECK(env.find("NCCL_IB_DISABLE")->as_string() == "1");
        CHECK(env.find("NCCL_IB_HCA") == nullptr);
        // Every node's log names the fallback, the node that forced it and the probe's reason.
        CHECK(node.err().find("warning: transport tcp: falling back to TCP: node 2 (127.0.0.1) "
                              "cannot use RDMA: no RDMA device") != std::string::npos);
      } else {
        CHECK(plan.find("transport")->as_string() == "rdma");
        CHECK(env.find("NCCL_IB_DISABLE")->as_string() == "0");
        CHECK(env.find("NCCL_IB_HCA")->as_string() == "=mlx5_2:1");
        CHECK(node.err().find("falling back") == std::string::npos);
      }
      CHECK(env.find("NCCL_SOCKET_IFNAME")->as_string() == "=lo");
    }
  }
}

TEST_CASE("rendezvous: rdma never degrades: one node without RDMA fails every node",
          "[rendezvous]") {
  TempDir dir;
  rdma_and_plain_trees(dir);
  std::vector<BootProcess> nodes = four_nodes(dir, "rdma", true);
  for (int rank = 0; rank < 4; ++rank) {
    BootProcess& node = nodes[static_cast<size_t>(rank)];
    INFO("rank " << rank << ": " << node.err());
    REQUIRE(boot_test::wait_exit(node, 15));
    CHECK(node.exit_code == boot::kExitTransport);
    CHECK(node.out().empty());  // no plan printed: nothing would run on TCP
    std::string line =
        "mlenv-boot: error: transport rdma is required but node 2 (127.0.0.1) cannot use RDMA: "
        "no RDMA device\n";
    CHECK(node.err().find(line) != std::string::npos);
    CHECK(node.err().size() >= line.size());
    CHECK(node.err().substr(node.err().size() - line.size()) == line);  // the last line
  }
  // The control run: every node with RDMA succeeds on RDMA.
  std::vector<BootProcess> control = four_nodes(dir, "rdma", false);
  for (BootProcess& node : control) {
    REQUIRE(boot_test::wait_exit(node, 15));
    CHECK(node.exit_code == 0);
    CHECK(boot::parse_json(node.out()).value->find("transport")->as_string() == "rdma");
  }
}

TEST_CASE("rendezvous: killing rank 0 stops the others within three heartbeats", "[rendezvous]") {
  for (int signal : {SIGKILL, SIGSTOP}) {
    // SIGKILL closes rank 0's sockets; SIGSTOP leaves them open and silent, so only the missed
    // heartbeats can tell.
    TempDir dir;
    Json overrides = overrides_for(3);
    Json command = Json::array();
    command.push("sh").push("-c").push("touch " + dir.path() + "/up.$GROUP_RANK; exec sleep 30");
    overrides.set("command", command);
    std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
    int port = boot_test::free_port();
    std::vector<BootProcess> nodes;
    for (int rank = 0; rank < 3; ++rank) {
      nodes.push_back(
          boot_test::start_boot(dir, "n" + std::to_string(rank), node_args(config, port, rank)));
    }
    for (int rank = 0; rank < 3; ++rank) {
      REQUIRE(boot_test::wait_for_file(dir.path() + "/up." + std::to_string(rank), 10));
    }
    double killed_at = boot_test::now_s();
    ::kill(nodes[0].pid, signal);
    for (int rank = 1; rank < 3; ++rank) {
      BootProcess& node = nodes[static_cast<size_t>(rank)];
      INFO("signal " << signal << " rank " << rank << ": " << node.err());
      REQUIRE(boot_test::wait_exit(node, 10));
      double took = boot_test::now_s() - killed_at;
      CHECK(node.exit_code == boot::kExitPeerLost);
      CHECK(node.err().find("error: peer lost: rank 0") != std::string::npos);
      CHECK(took < 3 * 0.5 + 0.3);  // heartbeat_s is 0.5 in the test config
    }
    ::kill(nodes[0].pid, SIGKILL);
    boot_test::wait_exit(nodes[0], 5);
  }
}

TEST_CASE("rendezvous: a worker failing on one node stops every node, and only it has its code",
          "[rendezvous]") {
  // The failing node exits with its worker's code, which a Job's pod failure policy counts
  // against `restarts`; the nodes it stopped exit 76 (peer lost), which the policy ignores, so
  // the failure counts once whether the news reached them as a report or as a dropped
  // connection (targets/kube/workload.cc, backoffLimit = restarts).
  TempDir dir;
  Json overrides = overrides_for(3, 2);
  Json command = Json::array();
  command.push("sh").push("-c").push("touch " + dir.path() +
                                     "/up.$RANK; if [ \"$RANK\" = 3 ]; then sleep 0.5; exit 9; fi; "
                                     "exec sleep 30");
  overrides.set("command", command);
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  int port = boot_test::free_port();
  std::vector<BootProcess> nodes;
  for (int rank = 0; rank < 3; ++rank) {
    nodes.push_back(
        boot_test::start_boot(dir, "n" + std::to_string(rank), node_args(config, port, rank)));
  }
  for (int rank = 0; rank < 3; ++rank) {
    BootProcess& node = nodes[static_cast<size_t>(rank)];
    INFO("rank " << rank << ": " << node.err());
    REQUIRE(boot_test::wait_exit(node, 10));
    CHECK(node.exit_code == (rank == 1 ? 9 : boot::kExitPeerLost));
  }
  CHECK(nodes[2].err().find("node 1 failed: worker 1 exited with code 9") != std::string::npos);
  CHECK(nodes[0].err().find("node 1 failed: worker 1 exited with code 9") != std::string::npos);
}

TEST_CASE("rendezvous: every node waits at the exit barrier and then succeeds", "[rendezvous]") {
  TempDir dir;
  Json overrides = overrides_for(2, 2);
  Json command = Json::array();
  // Node 0 finishes first; it must wait for node 1 rather than leave it without rank 0.
  command.push("sh").push("-c").push("sleep 0.$((GROUP_RANK * 6)); touch " + dir.path() +
                                     "/done.$RANK");
  overrides.set("command", command);
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  int port = boot_test::free_port();
  BootProcess rank0 = boot_test::start_boot(dir, "n0", node_args(config, port, 0));
  BootProcess rank1 = boot_test::start_boot(dir, "n1", node_args(config, port, 1));
  REQUIRE(boot_test::wait_exit(rank0, 10));
  REQUIRE(boot_test::wait_exit(rank1, 10));
  CHECK(rank0.exit_code == 0);
  CHECK(rank1.exit_code == 0);
  for (int rank = 0; rank < 4; ++rank) {
    CHECK(boot::path_exists(dir.path() + "/done." + std::to_string(rank)));
  }
}

namespace {

// A boot.json whose rank and rank 0 come only from what the target wrote (format version 3).
std::string placed_config(const TempDir& dir, const char* rank_env, const char* host,
                          const char* host_env, int port) {
  Json rank = Json::object();
  rank.set("env", rank_env);
  Json rendezvous = Json::object();
  rendezvous.set("host", host).set("host_env", host_env).set("port", port);
  Json overrides = overrides_for(2);
  overrides.set("rank", rank).set("rendezvous", rendezvous);
  return boot_test::write_config(dir, boot_test::test_config(overrides));
}

// Runs two dry-run nodes with only `--config` and the environment each gets; returns their
// dry-run plans.
std::vector<Json> run_placed(const TempDir& dir, const std::string& config,
                             const std::vector<std::map<std::string, std::string>>& envs) {
  std::vector<BootProcess> nodes;
  for (std::size_t rank = 0; rank < envs.size(); ++rank) {
    nodes.push_back(boot_test::start_boot(dir, "placed" + std::to_string(rank),
                                          {"--config", config, "--dry-run"}, envs[rank]));
  }
  std::vector<Json> plans;
  for (BootProcess& node : nodes) {
    INFO("stderr: " << node.err());
    REQUIRE(boot_test::wait_exit(node, 30));
    REQUIRE(node.exit_code == 0);
    auto plan = boot::parse_json(node.out());
    REQUIRE(plan.value);
    plans.push_back(*plan.value);
  }
  return plans;
}

}  // namespace

TEST_CASE("rendezvous: rank and rank 0's host from boot.json alone, as Slurm's script sets them",
          "[rendezvous]") {
  TempDir dir;
  int port = boot_test::free_port();
  std::string config = placed_config(dir, "SLURM_NODEID", "", "MLENV_RDZV_HOST", port);
  // Started in reverse, so rank 1 waits for rank 0's listener as on a real cluster.
  std::vector<Json> plans = run_placed(dir, config,
                                       {{{"SLURM_NODEID", "1"}, {"MLENV_RDZV_HOST", "127.0.0.1"}},
                                        {{"SLURM_NODEID", "0"}, {"MLENV_RDZV_HOST", "127.0.0.1"}}});
  for (std::size_t i = 0; i < plans.size(); ++i) {
    CHECK(plans[i].find("node_rank")->as_int() == 1 - static_cast<int>(i));
    CHECK(plans[i].find("rank_source")->as_string() == "SLURM_NODEID");
    CHECK(plans[i].find("master_addr")->as_string() == "127.0.0.1");
    // Rank 0 by its rendezvous host, rank 1 by the address it reached rank 0 from.
    CHECK(*plans[i].find("hostfile") ==
          Json(Json::Array{Json("127.0.0.1 slots=1"), Json("127.0.0.1 slots=1")}));
  }
}

TEST_CASE("rendezvous: a JobSet's rank variable and a computed host, no flags", "[rendezvous]") {
  TempDir dir;
  int port = boot_test::free_port();
  std::string config = placed_config(dir, "JOB_COMPLETION_INDEX", "127.0.0.1", "", port);
  std::vector<Json> plans = run_placed(
      dir, config,
      {{{"JOB_COMPLETION_INDEX", "0"}, {"NODE_RANK", "1"}},  // NODE_RANK is not boot.json's source
       {{"JOB_COMPLETION_INDEX", "1"}}});
  CHECK(plans[0].find("node_rank")->as_int() == 0);
  CHECK(plans[1].find("node_rank")->as_int() == 1);
  CHECK(plans[1].find("master_addr")->as_string() == "127.0.0.1");
}

TEST_CASE("rendezvous: an unset host variable is a config error naming it", "[rendezvous]") {
  TempDir dir;
  std::string config =
      placed_config(dir, "SLURM_NODEID", "", "MLENV_RDZV_HOST", boot_test::free_port());
  BootProcess node = boot_test::start_boot(dir, "nohost", {"--config", config, "--dry-run"},
                                           {{"SLURM_NODEID", "1"}});
  REQUIRE(boot_test::wait_exit(node, 10));
  CHECK(node.exit_code == boot::kExitConfigError);
  CHECK(node.err().find("MLENV_RDZV_HOST (boot.json `rendezvous.host_env`) is not set") !=
        std::string::npos);
}
