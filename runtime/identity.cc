#include "identity.h"

#include "exit_code.h"
#include "util.h"

namespace boot {

std::optional<int> hostname_ordinal(const std::string& hostname) {
  // A pod's hostname is never an FQDN in Kubernetes, but a Slurm or bare-metal one may be.
  std::string name = hostname.substr(0, hostname.find('.'));
  size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash == 0) return std::nullopt;
  std::optional<std::int64_t> ordinal = parse_uint(std::string_view(name).substr(dash + 1));
  if (!ordinal || *ordinal > 1'000'000) return std::nullopt;
  return static_cast<int>(*ordinal);
}

namespace {

// The rank in the variable boot.json names (`rank.env`), which the scheduler sets.
int rank_from_env(const EnvMap& env, const std::string& name) {
  std::optional<std::string> value = lookup(env, name);
  if (!value) {
    throw BootError(kExitConfigError, "no node rank: " + name +
                                          " (boot.json `rank.env`) is not set; give --node-rank");
  }
  std::optional<std::int64_t> rank = parse_uint(trim(*value));
  if (!rank || *rank > 1'000'000) {
    throw BootError(kExitConfigError, name + "=" + *value + " is not a node rank");
  }
  return static_cast<int>(*rank);
}

}  // namespace

Identity resolve_identity(const IdentityInputs& inputs) {
  Identity identity;
  if (inputs.flag_nnodes) {
    identity.nnodes = *inputs.flag_nnodes;
    identity.nnodes_source = "--nnodes";
  } else {
    identity.nnodes = inputs.config_nnodes;
    identity.nnodes_source = "boot.json";
  }
  if (identity.nnodes < 1) throw BootError(kExitConfigError, "nnodes must be at least 1");

  if (inputs.flag_node_rank) {
    identity.node_rank = *inputs.flag_node_rank;
    identity.rank_source = "--node-rank";
  } else if (!inputs.rank.env.empty()) {
    identity.node_rank = rank_from_env(inputs.env, inputs.rank.env);
    identity.rank_source = inputs.rank.env;
  } else {
    std::optional<int> ordinal = hostname_ordinal(inputs.hostname);
    if (!ordinal) {
      throw BootError(kExitConfigError,
                      "no node rank: boot.json takes it from the hostname's ordinal "
                      "(<workload>-<n>), and the hostname is \"" +
                          inputs.hostname + "\"; give --node-rank");
    }
    identity.node_rank = *ordinal;
    identity.rank_source = "hostname ordinal (" + inputs.hostname + ")";
  }
  if (identity.node_rank >= identity.nnodes) {
    throw BootError(kExitConfigError, "node rank " + std::to_string(identity.node_rank) +
                                          " (from " + identity.rank_source +
                                          ") is out of range for nnodes " +
                                          std::to_string(identity.nnodes));
  }
  return identity;
}

}  // namespace boot
