#pragma once
// Phase 6, the NCCL self-test (--nccl-check): an all-reduce sweep across every rank of every node
// before the job starts, measured the way nccl-tests measures, written to results.json.

#include <cstdint>
#include <string>
#include <vector>

#include "json.h"
#include "localise.h"
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
  std::string job;
  int nnodes = 1;
  int nproc_per_node = 1;
  int node_rank = 0;
  std::string unique_id_hex;  ///< from the plan; made locally when there is a single node
  std::string transport;
  std::uint64_t max_bytes = std::uint64_t{128} << 20;
  double min_busbw_gbps = 0;
  double timeout_s = 120;
  std::string results_path;    ///< written by node 0 only
  EnvMap nccl_env;             ///< the NCCL variables in effect, recorded in results.json
  bool diagnose = false;       ///< localise even when the sweep passes
  double step_timeout_s = 60;  ///< the deadline of each localisation step
  std::uint64_t step_bytes = std::uint64_t{256} << 20;  ///< each step's message size
  std::string simulate_model;      ///< a cluster model (kSimulateVariable's file): simulate
  std::vector<std::string> hosts;  ///< hosts[i] is node i, as the plan has them
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

/// The outcome of a sweep: "passed", "failed" (wrong values, or the average busbw below the
/// threshold) or "error" (it could not run), with one line saying why when not passed.
struct SweepVerdict {
  std::string status;
  std::string error;
};

/// Judges a finished sweep: passed when no value is wrong and the average busbw is at least
/// `min_busbw_gbps` (exactly at the threshold passes).
SweepVerdict judge_sweep(const std::vector<SweepRow>& rows, double min_busbw_gbps);

/// The exit code of a verdict: 0 passed, kExitNcclCheckFailed (1) failed, kExitNcclCheckError
/// error.
int verdict_exit_code(const SweepVerdict& verdict);

/// When the check ran, for results.json.
struct CheckTimes {
  std::string started_at;   ///< UTC, ISO 8601
  std::string finished_at;  ///< UTC, ISO 8601
  double total_time_s = 0;
};

/// results.json (format_version 2): the job, verdict, shape, transport, NCCL version, times,
/// threshold, average busbw, nccl-tests-style rows, the NCCL environment, and the localisation's
/// per-node, per-pair and per-rail rows, step times and suspects (runtime/README.md).
Json results_to_json(const NcclCheckRequest& request, const std::vector<SweepRow>& rows,
                     const SweepVerdict& verdict, const std::string& nccl_version,
                     const CheckTimes& times, const Localisation& localisation = {});

/// The one stdout line `mlenvc results` finds in rank 0's pod log: "MLENV_RESULTS <json>".
std::string results_line(const Json& results);

/// Writes results.json (creating its folders) and prints results_line on stdout; node 0 only.
void publish_results(const Json& results, const std::string& path);

/// The current time in UTC as ISO 8601 ("2026-01-01T00:00:00Z").
std::string utc_now();

/// Whether the localisation runs after a sweep with this verdict: always with `diagnose`, else
/// when the sweep failed (not when it could not run).
bool should_localise(const SweepVerdict& verdict, bool diagnose);

/// Runs the sweep with a non-blocking init and a deadline (never hangs: ncclCommAbort on
/// timeout), then on rank 0 the localisation when should_localise says so, with the members
/// following its steps over `links`; publishes results.json on node 0 and returns the code
/// every node exits with (rank 0's verdict). Without NCCL or a model it throws
/// BootError(kExitConfigError).
int run_nccl_check(const NcclCheckRequest& request, NodeLinks& links);

}  // namespace boot
