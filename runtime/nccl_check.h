#pragma once
// Phase 6, the NCCL self-test (--nccl-check): an all-reduce sweep across every rank of every node
// before the job starts, measured the way nccl-tests measures, written to results.json.

#include <cstdint>
#include <string>
#include <vector>

#include "json.h"
#include "process_env.h"

namespace boot {

/// Whether this mlenv-boot was compiled against CUDA and NCCL.
bool nccl_check_built();

/// The NCCL version this build links against ("2.28.9"), or empty without NCCL.
std::string nccl_version_text();

/// Whether the NCCL built against predates dynamic RoCE GID selection (2.21), so
/// NCCL_IB_GID_INDEX must be exported.
bool nccl_needs_gid_index();

/// A fresh ncclUniqueId as hex, made on rank 0's node after its NCCL variables are set (the id
/// embeds the bootstrap address). Throws BootError when NCCL is missing or fails.
std::string make_nccl_unique_id();

/// What one node runs: ranks node_rank*nproc .. +nproc-1, one per local GPU.
struct NcclCheckRequest {
  int nnodes = 1;
  int nproc_per_node = 1;
  int node_rank = 0;
  std::string unique_id_hex;  ///< from the plan; made locally when there is a single node
  std::string transport;
  std::uint64_t max_bytes = std::uint64_t{128} << 20;
  double min_busbw_gbps = 0;
  double timeout_s = 120;
  std::string results_path;  ///< written by node 0 only
  EnvMap nccl_env;           ///< the NCCL variables in effect, recorded in results.json
};

/// One size of the sweep, as a row of nccl-tests' table.
struct SweepRow {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::uint64_t wrong = 0;
};

/// nccl-tests' bus bandwidth for all-reduce: algbw * 2(n-1)/n, 0 for a single rank.
double allreduce_busbw(double algbw_gbps, int nranks);

/// algbw in GB/s (decimal) from bytes and seconds, as nccl-tests computes it.
double algorithm_bandwidth(std::uint64_t bytes, double seconds);

/// The mean busbw over the rows (nccl-tests' "Avg bus bandwidth").
double average_busbw(const std::vector<SweepRow>& rows);

/// The sizes swept: 8 bytes doubling up to max_bytes.
std::vector<std::uint64_t> sweep_sizes(std::uint64_t max_bytes);

/// results.json: rows, average, threshold, status and the environment NCCL ran with.
Json results_to_json(const NcclCheckRequest& request, const std::vector<SweepRow>& rows,
                     const std::string& status, const std::string& error,
                     const std::string& started_at, const std::string& finished_at);

/// Runs the sweep with a non-blocking init and a deadline (never hangs: ncclCommAbort on
/// timeout), writes results.json on node 0, and returns 0 on a pass or kExitNcclCheckFailed.
/// Without NCCL it throws BootError(kExitConfigError).
int run_nccl_check(const NcclCheckRequest& request);

}  // namespace boot
