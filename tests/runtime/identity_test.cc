#include <catch2/catch.hpp>

#include "exit_code.h"
#include "identity.h"

using boot::Identity;
using boot::IdentityInputs;

TEST_CASE("identity: --node-rank, else the source boot.json names and no other", "[identity]") {
  IdentityInputs inputs;
  inputs.config_nnodes = 16;
  inputs.hostname = "train-9";
  inputs.rank.env = "JOB_COMPLETION_INDEX";
  inputs.env = {{"SLURM_NODEID", "5"},
                {"JOB_COMPLETION_INDEX", "4"},
                {"NODE_RANK", "2"},
                {"RANK", "7"}};  // a PyTorchJob node rank under torchrun's name: never read
  inputs.flag_node_rank = 1;
  CHECK(resolve_identity(inputs).node_rank == 1);
  CHECK(resolve_identity(inputs).rank_source == "--node-rank");
  inputs.flag_node_rank.reset();
  Identity indexed = resolve_identity(inputs);
  CHECK(indexed.node_rank == 4);
  CHECK(indexed.rank_source == "JOB_COMPLETION_INDEX");
  inputs.rank.env = "SLURM_NODEID";
  CHECK(resolve_identity(inputs).node_rank == 5);

  // A StatefulSet: the hostname's ordinal, whatever variables are set.
  inputs.rank = {"", true};
  Identity from_host = resolve_identity(inputs);
  CHECK(from_host.node_rank == 9);
  CHECK(from_host.rank_source == "hostname ordinal (train-9)");
  CHECK(from_host.nnodes == 16);
  CHECK(from_host.nnodes_source == "boot.json");
}

TEST_CASE("identity: a missing rank variable is a config error naming it", "[identity]") {
  IdentityInputs inputs;
  inputs.config_nnodes = 2;
  inputs.rank.env = "SLURM_NODEID";
  inputs.env = {{"JOB_COMPLETION_INDEX", "1"}};  // not the variable boot.json names
  try {
    resolve_identity(inputs);
    FAIL("a rank was taken from a variable boot.json does not name");
  } catch (const boot::BootError& error) {
    CHECK(error.code() == boot::kExitConfigError);
    CHECK(std::string(error.what()).find("SLURM_NODEID (boot.json `rank.env`) is not set") !=
          std::string::npos);
  }
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
  inputs.rank = {"", true};
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
  inputs.rank = {"JOB_COMPLETION_INDEX", false};
  inputs.env["JOB_COMPLETION_INDEX"] = "one";
  CHECK_THROWS_AS(resolve_identity(inputs), boot::BootError);
}
