// The localisation: its pure parts (pairings, judging the rows), then real mlenv-boot processes
// on loopback (real rendezvous, real control channel) with the simulated collective, which must
// name exactly the faults of the cluster model and nothing else.

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include "collective.h"
#include "exit_code.h"
#include "harness.h"
#include "localise.h"
#include "util.h"

using boot::Json;
using boot_test::BootProcess;
using boot_test::TempDir;

namespace {

Json fault(std::initializer_list<std::pair<const char*, Json>> fields) {
  Json out = Json::object();
  for (const auto& [key, value] : fields) out.set(key, value);
  return out;
}

Json model(const std::vector<Json>& faults, double step_s = 0.01) {
  Json list = Json::array();
  for (const Json& entry : faults) list.push(entry);
  Json rails = Json::array();
  for (const char* hca : {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}) rails.push(hca);
  Json out = Json::object();
  out.set("nvlink_gbps", 360)
      .set("rail_gbps", 25)
      .set("rails", rails)
      .set("step_s", step_s)
      .set("faults", list);
  return out;
}

// What a suspect names: node, partner (-1: none) and rail.
using Named = std::tuple<int, int, std::string>;

struct Run {
  std::vector<BootProcess> nodes;
  Json results;
  double seconds = 0;
};

// Starts nnodes acceptance runs (rank 0 first), all simulating `cluster`, and waits for them.
Run run_acceptance(const TempDir& dir, int nnodes, const Json& cluster, bool diagnose,
                   double min_busbw = 0, double step_timeout_s = 2) {
  Json check = Json::object();
  check.set("min_busbw_gbps", min_busbw)
      .set("max_bytes", 1 << 20)
      .set("timeout_s", 20)
      .set("step_timeout_s", step_timeout_s);
  if (diagnose) check.set("diagnose", true);
  Json overrides = Json::object();
  overrides.set("nnodes", nnodes).set("nccl_check", check);
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  std::string model_path = dir.write("cluster.json", cluster.dump());
  int port = boot_test::free_port();
  Run run;
  double start = boot_test::now_s();
  for (int rank = 0; rank < nnodes; ++rank) {
    run.nodes.push_back(boot_test::start_boot(
        dir, "node" + std::to_string(rank),
        {"--config", config, "--rdzv", "127.0.0.1:" + std::to_string(port), "--node-rank",
         std::to_string(rank), "--nccl-check", "--results", dir.path() + "/results.json"},
        {{boot::kSimulateVariable, model_path}}));
  }
  for (BootProcess& node : run.nodes) REQUIRE(boot_test::wait_exit(node, 60));
  run.seconds = boot_test::now_s() - start;
  auto parsed = boot::parse_json(boot_test::slurp(dir.path() + "/results.json"));
  INFO("rank 0 stderr: " << run.nodes[0].err());
  REQUIRE(parsed.value);
  run.results = *parsed.value;
  return run;
}

std::set<Named> named(const Json& results) {
  std::set<Named> out;
  for (const Json& suspect : results.find("suspects")->as_array()) {
    const Json* partner = suspect.find("partner");
    out.insert({static_cast<int>(suspect.find("node")->as_int()),
                partner->is_null() ? -1 : static_cast<int>(partner->as_int()),
                suspect.find("rail")->as_string()});
  }
  return out;
}

// The modelled faults of one cluster size, and what must be named for them.
void names_exactly(int nnodes, const std::vector<Json>& faults, const std::set<Named>& expected) {
  TempDir dir;
  Run run = run_acceptance(dir, nnodes, model(faults), true);
  INFO(run.results.pretty());
  CHECK(named(run.results) == expected);
  CHECK(run.results.find("format_version")->as_int() == 2);
  CHECK(run.results.find("status")->as_string() == (expected.empty() ? "passed" : "failed"));
  // Every node ends with rank 0's verdict.
  for (BootProcess& node : run.nodes) {
    INFO(node.err());
    CHECK(node.exit_code == (expected.empty() ? 0 : boot::kExitNcclCheckFailed));
  }
  CHECK(run.results.find("nodes")->as_array().size() == static_cast<size_t>(nnodes));
}

}  // namespace

TEST_CASE("localise: pairings meet every node with two partners", "[localise]") {
  CHECK(boot::pair_rounds(1).empty());
  CHECK(boot::pair_rounds(2) == std::vector<std::vector<std::pair<int, int>>>{{{0, 1}}});
  for (int n : {3, 4, 5, 16, 17, 64}) {
    auto rounds = boot::pair_rounds(n);
    CHECK(rounds.size() == (n % 2 ? 3u : 2u));
    std::vector<std::set<int>> partners(static_cast<size_t>(n));
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (auto [a, b] : round) {
        CHECK(busy.insert(a).second);  // all pairs of a round run at once: disjoint
        CHECK(busy.insert(b).second);
        partners[static_cast<size_t>(a)].insert(b);
        partners[static_cast<size_t>(b)].insert(a);
      }
    }
    for (const auto& mine : partners) CHECK(mine.size() == 2);
  }
}

TEST_CASE("localise: judging rows", "[localise]") {
  std::vector<boot::NodeRow> nodes = {{0, 360, ""}, {1, 350, ""}, {2, 60, ""}, {3, 0, "boom"}};
  auto named_nodes = boot::judge_nodes(nodes);
  REQUIRE(named_nodes.size() == 2);
  CHECK(named_nodes[0].node == 2);
  CHECK(named_nodes[0].expected_gbps == 360);  // the upper quartile of 60, 350, 360
  CHECK(named_nodes[1].node == 3);

  // 4 nodes, node 1 slow with both partners.
  std::vector<boot::PairRow> pairs = {
      {1, 0, 1, 10, ""}, {1, 2, 3, 100, ""}, {2, 1, 2, 10, ""}, {2, 3, 0, 100, ""}};
  auto verdict = boot::judge_pairs(pairs, {});
  CHECK(verdict.network_suspects == std::vector<int>{1});
  CHECK(verdict.links.empty());
  // Already named by the per-node step: not again, and its pairs name no link either.
  CHECK(boot::judge_pairs(pairs, {1}).network_suspects.empty());
  CHECK(boot::judge_pairs(pairs, {1}).links.empty());
  // Pair (2,3) slow only together: its link.
  pairs = {{1, 0, 1, 100, ""}, {1, 2, 3, 20, ""}, {2, 1, 2, 100, ""}, {2, 3, 0, 100, ""}};
  verdict = boot::judge_pairs(pairs, {});
  CHECK(verdict.network_suspects.empty());
  REQUIRE(verdict.links.size() == 1);
  CHECK(verdict.links[0].node == 2);
  CHECK(verdict.links[0].partner == 3);
  CHECK(verdict.links[0].measured_gbps == 20);
  // A lone pair has nothing to be compared with: its rails are.
  verdict = boot::judge_pairs({{1, 0, 1, 10, ""}}, {});
  CHECK(verdict.unjudged == std::vector<int>{0, 1});
  CHECK(verdict.network_suspects.empty());
}

TEST_CASE("localise: 2 simulated nodes name the slow NVLink", "[localise]") {
  names_exactly(2, {fault({{"node", 1}, {"nvlink", 0.2}})}, {{1, -1, ""}});
}

TEST_CASE("localise: 2 simulated nodes name the slow rail between them", "[localise]") {
  // Two nodes only meet each other: the rail is known, not its end.
  names_exactly(2, {fault({{"node", 0}, {"rail", "mlx5_1"}, {"factor", 0.1}})}, {{0, 1, "mlx5_1"}});
}

TEST_CASE("localise: 4 simulated nodes name a rail, an NVLink and a link", "[localise]") {
  names_exactly(4,
                {fault({{"node", 3}, {"rail", "mlx5_2"}, {"factor", 0.1}}),
                 fault({{"node", 1}, {"nvlink", 0.2}})},
                {{3, -1, "mlx5_2"}, {1, -1, ""}});
}

TEST_CASE("localise: 16 simulated nodes name a slow rail, a rail down, NVLink and a link",
          "[localise]") {
  names_exactly(16,
                {fault({{"node", 3}, {"rail", "mlx5_2"}, {"factor", 0.1}}),
                 fault({{"node", 5}, {"nvlink", 0.2}}),
                 fault({{"node", 9}, {"rail", "mlx5_0"}, {"down", true}}),
                 fault({{"link", Json(Json::Array{Json(12), Json(13)})}, {"factor", 0.3}})},
                {{3, -1, "mlx5_2"}, {5, -1, ""}, {9, -1, "mlx5_0"}, {12, 13, ""}});
}

TEST_CASE("localise: 64 simulated nodes name exactly the modelled faults", "[localise]") {
  names_exactly(64,
                {fault({{"node", 3}, {"rail", "mlx5_2"}, {"factor", 0.1}}),
                 fault({{"node", 5}, {"nvlink", 0.2}}),
                 fault({{"node", 40}, {"rail", "mlx5_3"}, {"down", true}}),
                 fault({{"link", Json(Json::Array{Json(20), Json(21)})}, {"factor", 0.3}})},
                {{3, -1, "mlx5_2"}, {5, -1, ""}, {40, -1, "mlx5_3"}, {20, 21, ""}});
}

TEST_CASE("localise: a healthy cluster passes with no suspect", "[localise]") {
  names_exactly(4, {}, {});
}

TEST_CASE("localise: a node dying mid-step is the suspect, and nothing hangs", "[localise]") {
  TempDir dir;
  Run run =
      run_acceptance(dir, 4, model({fault({{"node", 2}, {"dies_in", "pair"}})}), true, 0, 1.0);
  INFO(run.results.pretty());
  for (BootProcess& node : run.nodes) INFO(node.err());
  REQUIRE(named(run.results) == std::set<Named>{{2, -1, ""}});
  CHECK(run.results.find("suspects")
            ->as_array()[0]
            .find("reason")
            ->as_string()
            .find("lost during the pairs step") == 0);
  CHECK(run.nodes[2].exit_code == 137);
  for (int rank : {0, 1, 3}) CHECK(run.nodes[static_cast<size_t>(rank)].exit_code == 1);
  // Bounded: the partner of the dead node waits one step timeout (1 s), not forever.
  CHECK(run.seconds < 10);
}

TEST_CASE("localise: below min_busbw_gbps the localisation runs without diagnose", "[localise]") {
  TempDir dir;
  Run run = run_acceptance(dir, 4, model({fault({{"node", 1}, {"nvlink", 0.2}})}), false, 1000);
  CHECK(named(run.results) == std::set<Named>{{1, -1, ""}});
  CHECK(run.results.find("localised")->as_bool());
}

TEST_CASE("localise: a passing sweep without diagnose runs no step", "[localise]") {
  TempDir dir;
  Run run = run_acceptance(dir, 2, model({}), false, 0);
  CHECK(run.results.find("status")->as_string() == "passed");
  CHECK_FALSE(run.results.find("localised")->as_bool());
  CHECK(run.results.find("nodes")->as_array().empty());
  for (BootProcess& node : run.nodes) CHECK(node.exit_code == 0);
}

TEST_CASE("localise: a node dying during the sweep is named, and the others stop", "[localise]") {
  TempDir dir;
  Run run = run_acceptance(dir, 3, model({fault({{"node", 1}, {"dies_in", "sweep"}})}), false);
  CHECK(named(run.results) == std::set<Named>{{1, -1, ""}});
  CHECK(run.results.find("suspects")
            ->as_array()[0]
            .find("reason")
            ->as_string()
            .find("lost during the sweep step") == 0);
  CHECK(run.nodes[1].exit_code == 137);
  CHECK(run.nodes[0].exit_code == 1);
  CHECK(run.nodes[2].exit_code == 1);
}

TEST_CASE("localise: NCCL_IB_HCA's entries are the rails", "[localise]") {
  CHECK(boot::hcas_of("=mlx5_0:1,mlx5_3:1") == std::vector<std::string>{"mlx5_0:1", "mlx5_3:1"});
  CHECK(boot::hcas_of("mlx5_2").size() == 1);
  CHECK(boot::hcas_of("").empty());
}

TEST_CASE("localise: a rail test's child without a usable GPU fails at once with no figure",
          "[localise]") {
  if (boot::path_exists("/dev/nvidia0")) {
    SUCCEED("a GPU is present: tests/bench/gpu_bench.sh exercises the NCCL backend");
    return;
  }
  TempDir dir;
  BootProcess child = boot_test::start_boot(
      dir, "rail", {},
      {{boot::kRailStepVariable, R"({"unique_id":"","nranks":2,"first_rank":0,)"
                                 R"("local":1,"bytes":1024,"timeout_s":5})"}});
  REQUIRE(boot_test::wait_exit(child, 20));
  // Built with NCCL: CUDA finds no GPU (74); without NCCL: a configuration error (78).
  CHECK(
      (child.exit_code == boot::kExitNcclCheckError || child.exit_code == boot::kExitConfigError));
  CHECK(child.out().find("MLENV_RAIL_BUSBW") == std::string::npos);
}
