#pragma once
// Hand-built typed programs shaped like the seeds, so the target is tested without the front
// end: barcelona (RDMA, per-pod storage, 2 nodes), h-kim (SR-IOV rails, named SCC), cairo
// (TCP, RWX storage) and a one-pod dev env.

#include <string>
#include <vector>

#include "compiler/ir/program.h"

namespace mlenv::testing {

ir::Env barcelona_env();
ir::Env hkim_env();
ir::Env cairo_tcp_env();
ir::Env dev_env();
/// An acceptance run on InfiniBand rails (two SR-IOV, one existing shared-device network).
ir::Env infiniband_env();
/// A dev env on RoCE where the runtime grants unlimited memlock, on an existing claim.
ir::Env memlock_env();

/// Three runs of cluster `cairo` (namespace `nccl-test`, `rwx` storage): `train` and `eval` on
/// the cluster's storage, `scratch` with a `storage` block of its own (a 2Ti workspace).
std::vector<ir::Env> shared_storage_envs();

/// A program holding `envs`, with one input file so plan.json has digests to show.
ir::Program program_of(std::vector<ir::Env> envs, std::string source = "examples/test.mlenv");

/// Every fixture by name ("barcelona", "h-kim", "cairo", "dev"): one program each.
std::vector<std::pair<std::string, ir::Program>> all_fixtures();

/// A fleet of `envs` RDMA envs over `clusters` clusters with three exposed services each.
ir::Program fleet(int envs, int clusters);

}  // namespace mlenv::testing
