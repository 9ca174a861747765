#include <catch2/catch.hpp>

#include "exit_code.h"
#include "identity.h"

using boot::Identity;
using boot::IdentityInputs;

TEST_CASE(
    "identity: precedence flags, NODE_RANK, PET_NODE_RANK, JOB_COMPLETION_INDEX, "
    "SLURM_NODEID, hostname",
    "[identity]") {
  IdentityInputs inputs;
  inputs.config_nnodes = 16;
  inputs.hostname = "train-9";
  inputs.env = {{"SLURM_NODEID", "5"},
                {"JOB_COMPLETION_INDEX", "4"},
                {"PET_NODE_RANK", "3"},
                {"NODE_RANK", "2"},
                {"RANK", "7"}};  // a PyTorchJob node rank under torchrun's name: never read
  inputs.flag_node_rank = 1;
  CHECK(resolve_identity(inputs).node_rank == 1);
  CHECK(resolve_identity(inputs).rank_source == "--node-rank");
  inputs.flag_node_rank.reset();
  const std::pair<const char*, int> order[] = {
      {"NODE_RANK", 2}, {"PET_NODE_RANK", 3}, {"JOB_COMPLETION_INDEX", 4}, {"SLURM_NODEID", 5}};
  for (const auto& [name, rank] : order) {
    Identity identity = resolve_identity(inputs);
    CHECK(identity.node_rank == rank);
    CHECK(identity.rank_source == name);
    inputs.env.erase(name);
  }
  Identity from_host = resolve_identity(inputs);
  CHECK(from_host.node_rank == 9);
  CHECK(from_host.rank_source == "hostname ordinal (train-9)");
  CHECK(from_host.nnodes == 16);
  CHECK(from_host.nnodes_source == "boot.json");
}

TEST_CASE("identity: hostname ordinals", "[identity]") {
  CHECK(boot::hostname_ordinal("train-0") == 0);
  CHECK(boot::hostname_ordinal("train-10") == 10);
  CHECK(boot::hostname_ordinal("my-job-worker-3") == 3);
  CHECK(boot::hostname_ordinal("train-3.train-headless.ns.svc") == 3);
  CHECK_FALSE(boot::hostname_ordinal("trainer"));
  CHECK_FALSE(boot::hostname_ordinal("train-"));
  CHECK_FALSE(boot::hostname_ordinal("train-x1"));
}

TEST_CASE("identity: nnodes is never guessed and ranks must fit", "[identity]") {
  IdentityInputs inputs;
  inputs.config_nnodes = 2;
  inputs.flag_nnodes = 4;
  inputs.hostname = "train-3";
  Identity identity = resolve_identity(inputs);
  CHECK(identity.nnodes == 4);
  CHECK(identity.nnodes_source == "--nnodes");

  inputs.flag_nnodes.reset();
  CHECK_THROWS_AS(resolve_identity(inputs), boot::BootError);  // rank 3 of 2

  inputs.hostname = "trainer";
  try {
    resolve_identity(inputs);
    FAIL("a hostname without an ordinal gave a rank");
  } catch (const boot::BootError& error) {
    CHECK(error.code() == boot::kExitConfigError);
    CHECK(std::string(error.what()).find("no node rank") != std::string::npos);
  }
  inputs.env["NODE_RANK"] = "one";
  CHECK_THROWS_AS(resolve_identity(inputs), boot::BootError);
}
