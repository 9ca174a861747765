#include "nccl_check.h"

#include <unistd.h>

#include <ctime>

#include "exit_code.h"
#include "log.h"
#include "signals.h"
#include "util.h"

#ifdef MLENV_BOOT_WITH_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#endif

namespace boot {

double algorithm_bandwidth(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / 1e9 / seconds : 0;
}

double allreduce_busbw(double algbw_gbps, int nranks) {
  if (nranks <= 1) return 0;
  return algbw_gbps * 2.0 * (nranks - 1) / nranks;
}

double average_busbw(const std::vector<SweepRow>& rows) {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const SweepRow& row : rows) sum += row.busbw_gbps;
  return sum / static_cast<double>(rows.size());
}

std::vector<std::uint64_t> sweep_sizes(std::uint64_t max_bytes) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = 8; bytes <= max_bytes; bytes *= 2) sizes.push_back(bytes);
  return sizes;
}

SweepVerdict judge_sweep(const std::vector<SweepRow>& rows, double min_busbw_gbps) {
  std::uint64_t wrong = 0;
  for (const SweepRow& row : rows) wrong += row.wrong;
  if (wrong > 0) return {"failed", std::to_string(wrong) + " wrong values"};
  double average = average_busbw(rows);
  if (average < min_busbw_gbps) {
    return {"failed", "average busbw " + std::to_string(average) + " GB/s is below the threshold " +
                          std::to_string(min_busbw_gbps) + " GB/s"};
  }
  return {"passed", ""};
}

int verdict_exit_code(const SweepVerdict& verdict) {
  if (verdict.status == "passed") return kExitOk;
  if (verdict.status == "failed") return kExitNcclCheckFailed;
  return kExitNcclCheckError;
}

Json results_to_json(const NcclCheckRequest& request, const std::vector<SweepRow>& rows,
                     const SweepVerdict& verdict, const std::string& nccl_version,
                     const CheckTimes& times) {
  Json table = Json::array();
  for (const SweepRow& row : rows) {
    // nccl-tests' columns: size, count, type, redop, time, algbw, busbw, #wrong.
    Json entry = Json::object();
    entry.set("bytes", static_cast<std::int64_t>(row.bytes))
        .set("count", static_cast<std::int64_t>(row.count))
        .set("type", "float")
        .set("op", "sum")
        .set("time_us", row.time_us)
        .set("algbw_gbps", row.algbw_gbps)
        .set("busbw_gbps", row.busbw_gbps)
        .set("wrong", static_cast<std::int64_t>(row.wrong));
    table.push(std::move(entry));
  }
  Json out = Json::object();
  out.set("format_version", 1)
      .set("job", request.job)
      .set("status", verdict.status)
      .set("error", verdict.error)
      .set("world_size", request.nnodes * request.nproc_per_node)
      .set("nnodes", request.nnodes)
      .set("nproc_per_node", request.nproc_per_node)
      .set("transport", request.transport)
      .set("nccl_version", nccl_version)
      .set("started_at", times.started_at)
      .set("finished_at", times.finished_at)
      .set("total_time_s", times.total_time_s)
      .set("min_busbw_gbps", request.min_busbw_gbps)
      .set("avg_busbw_gbps", average_busbw(rows))
      .set("rows", std::move(table))
      .set("env", to_json(request.nccl_env));
  return out;
}

std::string results_line(const Json& results) {
  return "MLENV_RESULTS " + results.dump();
}

void publish_results(const Json& results, const std::string& path) {
  if (!path.empty() && (!make_parent_dirs(path) || !write_file_atomic(path, results.pretty()))) {
    log_warning("cannot write " + path);
  }
  std::string line = results_line(results) + "\n";
  ssize_t ignored = ::write(STDOUT_FILENO, line.data(), line.size());
  (void)ignored;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm parts;
  ::gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

#ifndef MLENV_BOOT_WITH_NCCL

bool nccl_check_built() {
  return false;
}
std::string nccl_version_text() {
  return "";
}
bool nccl_needs_gid_index() {
  return false;
}

std::string make_nccl_unique_id() {
  throw BootError(kExitConfigError,
                  "--nccl-check: this mlenv-boot was built without NCCL (CUDA and NCCL were not "
                  "found when it was compiled)");
}

int run_nccl_check(const NcclCheckRequest&) {
  make_nccl_unique_id();
  return kExitConfigError;
}

#else

bool nccl_check_built() {
  return true;
}

std::string nccl_version_text() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) code = NCCL_VERSION_CODE;
  // NCCL encodes 2.8 and older as X*1000+Y*100+Z, later ones as X*10000+Y*100+Z.
  int major = code >= 10000 ? code / 10000 : code / 1000;
  int minor = code >= 10000 ? (code / 100) % 100 : (code / 100) % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

bool nccl_needs_gid_index() {
  return NCCL_VERSION_CODE < NCCL_VERSION(2, 21, 0);
}

namespace {

[[noreturn]] void fail_nccl(const std::string& what, ncclResult_t result) {
  throw BootError(kExitNcclCheckError, "--nccl-check: " + what + ": " + ncclGetErrorString(result));
}

std::string to_hex(const ncclUniqueId& id) {
  std::string hex;
  char pair[3];
  for (unsigned char byte : id.internal) {
    std::snprintf(pair, sizeof pair, "%02x", byte);
    hex += pair;
  }
  return hex;
}

ncclUniqueId from_hex(const std::string& hex) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (hex.size() != 2 * sizeof id.internal) {
    throw BootError(kExitNcclCheckError, "--nccl-check: the plan carries no NCCL unique id");
  }
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    id.internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

// The communicators and buffers of the local ranks; aborts whatever is left on the way out, so
// an error or a deadline never leaves NCCL threads blocking the exit.
class LocalRanks {
 public:
  ~LocalRanks() {
    for (ncclComm_t comm : comms) {
      if (comm) ncclCommAbort(comm);
    }
    for (size_t i = 0; i < streams.size(); ++i) {
      cudaSetDevice(static_cast<int>(i));
      if (send[i]) cudaFree(send[i]);
      if (recv[i]) cudaFree(recv[i]);
      if (start[i]) cudaEventDestroy(start[i]);
      if (stop[i]) cudaEventDestroy(stop[i]);
      if (streams[i]) cudaStreamDestroy(streams[i]);
    }
  }

  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<void*> send, recv;
  std::vector<cudaEvent_t> start, stop;
};

void check_cuda(cudaError_t error, const std::string& what) {
  if (error != cudaSuccess) {
    throw BootError(kExitNcclCheckError,
                    "--nccl-check: " + what + ": " + cudaGetErrorString(error));
  }
}

// Polls until every communicator left ncclInProgress; aborts through ~LocalRanks on a deadline.
void wait_for_comms(LocalRanks& ranks, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    bool pending = false;
    for (ncclComm_t comm : ranks.comms) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t call = ncclCommGetAsyncError(comm, &state);
      if (call != ncclSuccess) fail_nccl(what, call);
      if (state == ncclInProgress)
        pending = true;
      else if (state != ncclSuccess)
        fail_nccl(what, state);
    }
    if (!pending) return;
    if (Clock::now() >= deadline) {
      throw BootError(kExitNcclCheckError,
                      "--nccl-check: " + what + " did not finish before the deadline; aborted");
    }
    sleep_until(Clock::now() + std::chrono::milliseconds(1));
  }
}

// Waits for the stop events without a bare cudaStreamSynchronize, which would block forever on a
// collective that a network error stalled.
void wait_for_streams(LocalRanks& ranks, Clock::time_point deadline) {
  for (size_t i = 0; i < ranks.stop.size(); ++i) {
    for (;;) {
      cudaError_t state = cudaEventQuery(ranks.stop[i]);
      if (state == cudaSuccess) break;
      if (state != cudaErrorNotReady) check_cuda(state, "all-reduce");
      wait_for_comms(ranks, deadline, "all-reduce");
      if (Clock::now() >= deadline) {
        throw BootError(kExitNcclCheckError,
                        "--nccl-check: all-reduce did not finish before the deadline; aborted");
      }
      sleep_until(Clock::now() + std::chrono::microseconds(50));
    }
  }
}

std::vector<SweepRow> sweep(const NcclCheckRequest& request, Clock::time_point deadline) {
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "no usable GPU");
  int local = request.nproc_per_node;
  if (devices < local) {
    throw BootError(kExitNcclCheckError, "--nccl-check: " + std::to_string(local) +
                                             " ranks per node but only " + std::to_string(devices) +
                                             " GPUs are visible");
  }
  int world = request.nnodes * local;
  std::string id_hex =
      request.unique_id_hex.empty() ? make_nccl_unique_id() : request.unique_id_hex;
  ncclUniqueId id = from_hex(id_hex);
  size_t max_bytes = static_cast<size_t>(request.max_bytes);

  LocalRanks ranks;
  ranks.comms.assign(static_cast<size_t>(local), nullptr);
  ranks.streams.assign(static_cast<size_t>(local), nullptr);
  ranks.send.assign(static_cast<size_t>(local), nullptr);
  ranks.recv.assign(static_cast<size_t>(local), nullptr);
  ranks.start.assign(static_cast<size_t>(local), nullptr);
  ranks.stop.assign(static_cast<size_t>(local), nullptr);
  for (int i = 0; i < local; ++i) {
    check_cuda(cudaSetDevice(i), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&ranks.streams[i], cudaStreamNonBlocking), "stream");
    check_cuda(cudaMalloc(&ranks.send[i], max_bytes), "cudaMalloc");
    check_cuda(cudaMalloc(&ranks.recv[i], max_bytes), "cudaMalloc");
    check_cuda(cudaEventCreate(&ranks.start[i]), "cudaEventCreate");
    check_cuda(cudaEventCreate(&ranks.stop[i]), "cudaEventCreate");
    // Rank r contributes r+1 everywhere, so every element of the sum is world*(world+1)/2.
    float value = static_cast<float>(request.node_rank * local + i + 1);
    std::vector<float> fill(max_bytes / sizeof(float), value);
    check_cuda(
        cudaMemcpy(ranks.send[i], fill.data(), fill.size() * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  }

  // Non-blocking init: a missing peer shows up as a deadline, not as a hang in ncclCommInitRank.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t group = ncclGroupStart();
  for (int i = 0; i < local && group == ncclSuccess; ++i) {
    check_cuda(cudaSetDevice(i), "cudaSetDevice");
    ncclResult_t init = ncclCommInitRankConfig(&ranks.comms[static_cast<size_t>(i)], world, id,
                                               request.node_rank * local + i, &config);
    if (init != ncclSuccess && init != ncclInProgress) fail_nccl("ncclCommInitRankConfig", init);
  }
  group = ncclGroupEnd();
  if (group != ncclSuccess && group != ncclInProgress) fail_nccl("ncclGroupEnd", group);
  wait_for_comms(ranks, deadline, "ncclCommInitRankConfig");

  const float expected = static_cast<float>(world) * static_cast<float>(world + 1) / 2.0f;
  std::vector<SweepRow> rows;
  for (std::uint64_t bytes : sweep_sizes(request.max_bytes)) {
    size_t count = static_cast<size_t>(bytes / sizeof(float));
    int warmup = 2;
    int iters = bytes >= (std::uint64_t{64} << 20) ? 5 : 20;
    auto launch = [&] {
      ncclResult_t status = ncclGroupStart();
      for (int i = 0; i < local && status == ncclSuccess; ++i) {
        status = ncclAllReduce(ranks.send[i], ranks.recv[i], count, ncclFloat, ncclSum,
                               ranks.comms[static_cast<size_t>(i)], ranks.streams[i]);
      }
      ncclResult_t end = ncclGroupEnd();
      if (status != ncclSuccess && status != ncclInProgress) fail_nccl("ncclAllReduce", status);
      if (end != ncclSuccess && end != ncclInProgress) fail_nccl("ncclGroupEnd", end);
    };
    for (int w = 0; w < warmup; ++w) launch();
    for (int i = 0; i < local; ++i) {
      check_cuda(cudaSetDevice(i), "cudaSetDevice");
      check_cuda(cudaEventRecord(ranks.start[i], ranks.streams[i]), "cudaEventRecord");
    }
    for (int it = 0; it < iters; ++it) launch();
    for (int i = 0; i < local; ++i) {
      check_cuda(cudaSetDevice(i), "cudaSetDevice");
      check_cuda(cudaEventRecord(ranks.stop[i], ranks.streams[i]), "cudaEventRecord");
    }
    wait_for_streams(ranks, deadline);
    float elapsed_ms = 0;
    check_cuda(cudaEventElapsedTime(&elapsed_ms, ranks.start[0], ranks.stop[0]), "timing");

    SweepRow row;
    row.bytes = bytes;
    row.count = count;
    double seconds = elapsed_ms / 1e3 / iters;
    row.time_us = seconds * 1e6;
    row.algbw_gbps = algorithm_bandwidth(bytes, seconds);
    row.busbw_gbps = allreduce_busbw(row.algbw_gbps, world);
    // Check every element of small results and the ends of large ones.
    std::vector<float> result(std::min<size_t>(count, size_t{1} << 22));
    check_cuda(cudaSetDevice(0), "cudaSetDevice");
    check_cuda(cudaMemcpy(result.data(), ranks.recv[0], result.size() * sizeof(float),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    for (float value : result) row.wrong += value != expected;
    rows.push_back(row);
  }
  for (size_t i = 0; i < ranks.comms.size(); ++i) {
    check_cuda(cudaSetDevice(static_cast<int>(i)), "cudaSetDevice");
    ncclResult_t finalize = ncclCommFinalize(ranks.comms[i]);
    if (finalize != ncclSuccess && finalize != ncclInProgress) {
      fail_nccl("ncclCommFinalize", finalize);
    }
  }
  wait_for_comms(ranks, deadline, "ncclCommFinalize");
  for (ncclComm_t& comm : ranks.comms) {
    ncclCommDestroy(comm);
    comm = nullptr;
  }
  return rows;
}

}  // namespace

std::string make_nccl_unique_id() {
  ncclUniqueId id;
  ncclResult_t result = ncclGetUniqueId(&id);
  if (result != ncclSuccess) fail_nccl("ncclGetUniqueId", result);
  return to_hex(id);
}

int run_nccl_check(const NcclCheckRequest& request) {
  CheckTimes times;
  times.started_at = utc_now();
  Clock::time_point started = Clock::now();
  auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(request.timeout_s));
  std::vector<SweepRow> rows;
  SweepVerdict verdict;
  try {
    rows = sweep(request, deadline);
    verdict = judge_sweep(rows, request.min_busbw_gbps);
  } catch (const BootError& failure) {
    if (failure.code() >= 128) throw;  // told to stop: that is not a test result
    verdict = {"error", failure.what()};
  }
  times.finished_at = utc_now();
  times.total_time_s = std::chrono::duration<double>(Clock::now() - started).count();
  if (request.node_rank == 0) {
    publish_results(results_to_json(request, rows, verdict, nccl_version_text(), times),
                    request.results_path);
  }
  if (verdict.status != "passed") {
    log_error("nccl check " + verdict.status + ": " + verdict.error);
    return verdict_exit_code(verdict);
  }
  log_info("nccl check passed: " + std::to_string(rows.size()) + " sizes, avg busbw " +
           std::to_string(average_busbw(rows)) + " GB/s");
  return kExitOk;
}

#endif

}  // namespace boot
