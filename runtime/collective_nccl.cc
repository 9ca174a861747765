// The NCCL backend of the collective: the world communicator of the sweep, and the localisation's
// sub-communicators split from it (ncclCommSplit, NCCL >= 2.18). Timed the way nccl-tests'
// all_reduce_perf times (src/common.cu, BenchTime): one warm-up call per size, then 20 calls
// launched back to back on one stream, the wall time from the first launch to the stream's
// completion divided by 20, so small messages measure the same launch-bound latency.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "collective.h"
#include "exit_code.h"
#include "log.h"
#include "nccl_check.h"
#include "signals.h"

#ifdef MLENV_BOOT_WITH_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>
#endif

namespace boot {

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

std::unique_ptr<Collective> make_nccl_collective(const std::vector<std::string>&) {
  make_nccl_unique_id();
  return nullptr;
}

std::optional<int> run_rail_step_child() {
  if (!std::getenv(kRailStepVariable)) return std::nullopt;
  log_error("the rail test needs an mlenv-boot built with NCCL");
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

// nccl-tests' defaults: -w 1 warm-up call per size, -n 20 timed calls.
constexpr int kWarmupIters = 1;
constexpr int kTimedIters = 20;

[[noreturn]] void fail_nccl(const std::string& what, ncclResult_t result) {
  throw BootError(kExitNcclCheckError, "--nccl-check: " + what + ": " + ncclGetErrorString(result));
}

void check_cuda(cudaError_t error, const std::string& what) {
  if (error != cudaSuccess) {
    throw BootError(kExitNcclCheckError,
                    "--nccl-check: " + what + ": " + cudaGetErrorString(error));
  }
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

// Polls until every communicator left ncclInProgress; throws at the deadline (the owner aborts).
// Init, split and finalize sleep a millisecond between polls; a launch in the timed loop spins
// (yielding, as nccl-tests' testStreamSynchronize does) so that the wait adds no sleep to a call.
void wait_for_comms(const std::vector<ncclComm_t>& comms, Clock::time_point deadline,
                    const std::string& what, bool spin = false) {
  for (;;) {
    bool pending = false;
    for (ncclComm_t comm : comms) {
      if (!comm) continue;
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
    if (spin)
      std::this_thread::yield();
    else
      sleep_until(Clock::now() + std::chrono::milliseconds(1));
  }
}

void abort_all(std::vector<ncclComm_t>& comms) {
  for (ncclComm_t& comm : comms) {
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
  }
}

// Finalizes and destroys communicators within the deadline.
void destroy_all(std::vector<ncclComm_t>& comms, Clock::time_point deadline) {
  for (size_t i = 0; i < comms.size(); ++i) {
    if (!comms[i]) continue;
    check_cuda(cudaSetDevice(static_cast<int>(i)), "cudaSetDevice");
    ncclResult_t finalize = ncclCommFinalize(comms[i]);
    if (finalize != ncclSuccess && finalize != ncclInProgress)
      fail_nccl("ncclCommFinalize", finalize);
  }
  wait_for_comms(comms, deadline, "ncclCommFinalize");
  for (ncclComm_t& comm : comms) {
    if (comm) ncclCommDestroy(comm);
    comm = nullptr;
  }
}

// Fills `bytes` of device memory with one float value without a host buffer of that size: one
// MiB is copied up, then the filled part is doubled on the device until it covers everything.
void fill_on_device(void* buffer, size_t bytes, float value) {
  constexpr size_t kSeed = size_t{1} << 20;
  std::vector<float> seed(std::min(bytes, kSeed) / sizeof(float), value);
  size_t filled = seed.size() * sizeof(float);
  check_cuda(cudaMemcpy(buffer, seed.data(), filled, cudaMemcpyHostToDevice), "cudaMemcpy");
  auto* base = static_cast<char*>(buffer);
  while (filled < bytes) {
    size_t chunk = std::min(filled, bytes - filled);
    check_cuda(cudaMemcpy(base + filled, base, chunk, cudaMemcpyDeviceToDevice), "cudaMemcpy");
    filled += chunk;
  }
}

// This node's ranks: one per local GPU, with their stream, buffers and communicator.
struct LocalRanks {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<void*> send, recv;
  std::vector<cudaEvent_t> done;

  ~LocalRanks() {
    // An error or a deadline must never leave NCCL threads blocking the exit.
    abort_all(comms);
    for (size_t i = 0; i < streams.size(); ++i) {
      cudaSetDevice(static_cast<int>(i));
      if (send[i]) cudaFree(send[i]);
      if (recv[i]) cudaFree(recv[i]);
      if (done[i]) cudaEventDestroy(done[i]);
      if (streams[i]) cudaStreamDestroy(streams[i]);
    }
  }

  void allocate(int local, size_t bytes, float first_value) {
    comms.assign(static_cast<size_t>(local), nullptr);
    streams.assign(static_cast<size_t>(local), nullptr);
    send.assign(static_cast<size_t>(local), nullptr);
    recv.assign(static_cast<size_t>(local), nullptr);
    done.assign(static_cast<size_t>(local), nullptr);
    for (int i = 0; i < local; ++i) {
      check_cuda(cudaSetDevice(i), "cudaSetDevice");
      check_cuda(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), "stream");
      check_cuda(cudaMalloc(&send[i], bytes), "cudaMalloc");
      check_cuda(cudaMalloc(&recv[i], bytes), "cudaMalloc");
      check_cuda(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming), "cudaEventCreate");
      // Rank r contributes r+1 everywhere, so every element of the sum is world*(world+1)/2.
      fill_on_device(send[i], bytes, first_value + static_cast<float>(i));
    }
  }

  // `count` floats summed across the communicators, once; grouped only with several local GPUs,
  // as nccl-tests does (a group costs host time that a one-GPU latency figure would include).
  // On a non-blocking communicator of several ranks NCCL launches from a thread of its own and
  // returns ncclInProgress, and refuses the next call (ncclInvalidArgument) until
  // ncclCommGetAsyncError has seen the launch done (NVIDIA/nccl src/group.cc,
  // ncclGroupEndInternal; src/init.cc, ncclCommEnsureReady): so every launch is waited for. A
  // one-rank all-reduce is launched at once (src/enqueue.cc, taskAppend) and needs no wait.
  void launch(const std::vector<ncclComm_t>& on, size_t count, Clock::time_point deadline) {
    bool group = on.size() > 1;
    ncclResult_t status = group ? ncclGroupStart() : ncclSuccess;
    for (size_t i = 0; i < on.size() && (status == ncclSuccess || status == ncclInProgress); ++i) {
      status = ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, on[i], streams[i]);
    }
    ncclResult_t end = group ? ncclGroupEnd() : ncclSuccess;
    if (status != ncclSuccess && status != ncclInProgress) fail_nccl("ncclAllReduce", status);
    if (end != ncclSuccess && end != ncclInProgress) fail_nccl("ncclGroupEnd", end);
    if (status == ncclInProgress || end == ncclInProgress) {
      wait_for_comms(on, deadline, "ncclAllReduce", /*spin=*/true);
    }
  }

  // Waits for the streams by spinning on an event (as cudaStreamSynchronize spins), checking the
  // communicators and the deadline, so a stalled collective cannot block forever.
  void wait(const std::vector<ncclComm_t>& on, Clock::time_point deadline) {
    for (size_t i = 0; i < on.size(); ++i) {
      check_cuda(cudaSetDevice(static_cast<int>(i)), "cudaSetDevice");
      check_cuda(cudaEventRecord(done[i], streams[i]), "cudaEventRecord");
    }
    for (size_t i = 0; i < on.size(); ++i) {
      for (unsigned spins = 0;; ++spins) {
        cudaError_t state = cudaEventQuery(done[i]);
        if (state == cudaSuccess) break;
        if (state != cudaErrorNotReady) check_cuda(state, "all-reduce");
        if (spins % 1024 == 1023) {
          wait_for_comms(on, deadline, "all-reduce");
          if (Clock::now() >= deadline) {
            throw BootError(kExitNcclCheckError,
                            "--nccl-check: all-reduce did not finish before the deadline; aborted");
          }
        }
      }
    }
  }

  // Seconds per call: one warm-up call waited for, then kTimedIters back to back.
  double time_calls(const std::vector<ncclComm_t>& on, size_t count, Clock::time_point deadline) {
    for (int w = 0; w < kWarmupIters; ++w) launch(on, count, deadline);
    wait(on, deadline);
    Clock::time_point start = Clock::now();
    for (int it = 0; it < kTimedIters; ++it) launch(on, count, deadline);
    wait(on, deadline);
    return std::chrono::duration<double>(Clock::now() - start).count() / kTimedIters;
  }
};

class NcclCollective : public Collective {
 public:
  explicit NcclCollective(std::vector<std::string> rails) : rails_(std::move(rails)) {}

  std::vector<SweepRow> sweep(const NcclCheckRequest& request,
                              Clock::time_point deadline) override {
    int devices = 0;
    check_cuda(cudaGetDeviceCount(&devices), "no usable GPU");
    local_ = request.nproc_per_node;
    if (devices < local_) {
      throw BootError(kExitNcclCheckError, "--nccl-check: " + std::to_string(local_) +
                                               " ranks per node but only " +
                                               std::to_string(devices) + " GPUs are visible");
    }
    world_ = request.nnodes * local_;
    node_rank_ = request.node_rank;
    first_rank_ = request.node_rank * local_;
    std::string id_hex =
        request.unique_id_hex.empty() ? make_nccl_unique_id() : request.unique_id_hex;
    ncclUniqueId id = from_hex(id_hex);
    bytes_ = static_cast<size_t>(std::max(request.max_bytes, request.step_bytes));
    ranks_.allocate(local_, bytes_, static_cast<float>(first_rank_ + 1));

    // Non-blocking init: a missing peer shows up as a deadline, not a hang in ncclCommInitRank.
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t group = ncclGroupStart();
    for (int i = 0; i < local_ && group == ncclSuccess; ++i) {
      check_cuda(cudaSetDevice(i), "cudaSetDevice");
      ncclResult_t init = ncclCommInitRankConfig(&ranks_.comms[static_cast<size_t>(i)], world_, id,
                                                 first_rank_ + i, &config);
      if (init != ncclSuccess && init != ncclInProgress) fail_nccl("ncclCommInitRankConfig", init);
    }
    group = ncclGroupEnd();
    if (group != ncclSuccess && group != ncclInProgress) fail_nccl("ncclGroupEnd", group);
    wait_for_comms(ranks_.comms, deadline, "ncclCommInitRankConfig");

    std::vector<std::uint64_t> sizes = sweep_sizes(request.max_bytes);
    // nccl-tests warms every size up once before measuring any.
    for (std::uint64_t bytes : sizes) ranks_.launch(ranks_.comms, bytes / sizeof(float), deadline);
    ranks_.wait(ranks_.comms, deadline);
    const float expected = static_cast<float>(world_) * static_cast<float>(world_ + 1) / 2.0f;
    std::vector<SweepRow> rows;
    for (std::uint64_t bytes : sizes) {
      SweepRow row;
      row.bytes = bytes;
      row.count = bytes / sizeof(float);
      double seconds = ranks_.time_calls(ranks_.comms, row.count, deadline);
      row.time_us = seconds * 1e6;
      row.algbw_gbps = algorithm_bandwidth(bytes, seconds);
      row.busbw_gbps = allreduce_busbw(row.algbw_gbps, world_);
      row.wrong = count_wrong(row.count, expected);
      rows.push_back(row);
    }
    return rows;
  }

  StepFigure step(const StepSpec& spec) override {
    StepFigure figure;
    try {
      if (spec.kind == "rail") return rail_step(spec);
      figure.busbw_gbps = split_step(spec);
    } catch (const BootError& failure) {
      if (failure.code() >= 128) throw;
      figure.error = failure.what();
    }
    return figure;
  }

  std::vector<std::string> rails() const override { return rails_; }
  std::string group_id() override { return make_nccl_unique_id(); }
  std::string version() const override { return nccl_version_text(); }

  void finish(Clock::time_point deadline) override { destroy_all(ranks_.comms, deadline); }

 private:
  // Every element of small results, and the first 4 Mi elements of large ones.
  std::uint64_t count_wrong(size_t count, float expected) {
    std::vector<float> result(std::min<size_t>(count, size_t{1} << 22));
    check_cuda(cudaSetDevice(0), "cudaSetDevice");
    check_cuda(cudaMemcpy(result.data(), ranks_.recv[0], result.size() * sizeof(float),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    std::uint64_t wrong = 0;
    for (float value : result) wrong += value != expected;
    return wrong;
  }

  // A sub-communicator per group, split from the world communicator (collective: every rank of
  // the world calls it, ranks in no group with NCCL_SPLIT_NOCOLOR), timed, then destroyed.
  double split_step(const StepSpec& spec) {
    Clock::time_point deadline = time_after(Clock::now(), spec.timeout_s);
    std::vector<ncclComm_t> children(static_cast<size_t>(local_), nullptr);
    struct Abort {
      std::vector<ncclComm_t>& comms;
      ~Abort() { abort_all(comms); }
    } abort_on_exit{children};
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    int color = spec.nodes.empty() ? NCCL_SPLIT_NOCOLOR : spec.group;
    ncclResult_t group = ncclGroupStart();
    for (int i = 0; i < local_ && group == ncclSuccess; ++i) {
      check_cuda(cudaSetDevice(i), "cudaSetDevice");
      ncclResult_t split =
          ncclCommSplit(ranks_.comms[static_cast<size_t>(i)], color, first_rank_ + i,
                        &children[static_cast<size_t>(i)], &config);
      if (split != ncclSuccess && split != ncclInProgress) fail_nccl("ncclCommSplit", split);
    }
    group = ncclGroupEnd();
    if (group != ncclSuccess && group != ncclInProgress) fail_nccl("ncclGroupEnd", group);
    wait_for_comms(children, deadline, "ncclCommSplit");
    // A rank in no group gets no child to poll: the split completes on its world communicator.
    wait_for_comms(ranks_.comms, deadline, "ncclCommSplit");
    if (spec.nodes.empty()) return 0;
    size_t count = std::min<size_t>(spec.bytes, bytes_) / sizeof(float);
    double seconds = ranks_.time_calls(children, count, deadline);
    int ranks = static_cast<int>(spec.nodes.size()) * local_;
    double algbw = algorithm_bandwidth(count * sizeof(float), seconds);
    destroy_all(children, deadline);
    // One rank has no bus: its figure is the algbw, so one-GPU nodes still compare.
    return ranks > 1 ? allreduce_busbw(algbw, ranks) : algbw;
  }

  // NCCL reads NCCL_IB_HCA once per process, so a rail cannot be chosen for a communicator split
  // from the world one: each rail test runs in a child mlenv-boot with only that HCA, and
  // NCCL_NET=IB, so that a rail NCCL cannot use fails instead of silently running over TCP.
  StepFigure rail_step(const StepSpec& spec) {
    StepFigure figure;
    if (spec.rail < 0 || static_cast<size_t>(spec.rail) >= rails_.size()) {
      if (!spec.nodes.empty()) figure.error = "this node has no rail " + std::to_string(spec.rail);
      return figure;
    }
    const std::string& entry = rails_[static_cast<size_t>(spec.rail)];
    figure.hca = entry.substr(0, entry.find(':'));
    if (spec.nodes.empty()) return figure;
    int position = static_cast<int>(std::find(spec.nodes.begin(), spec.nodes.end(), node_rank_) -
                                    spec.nodes.begin());
    Json request = Json::object();
    request.set("unique_id", spec.unique_id)
        .set("nranks", static_cast<int>(spec.nodes.size()) * local_)
        .set("first_rank", position * local_)
        .set("local", local_)
        .set("bytes", static_cast<std::int64_t>(std::min<std::uint64_t>(spec.bytes, bytes_)))
        .set("timeout_s", spec.timeout_s);
    std::string output;
    std::string error = run_child(
        {{kRailStepVariable, request.dump()}, {"NCCL_IB_HCA", "=" + entry}, {"NCCL_NET", "IB"}},
        spec.timeout_s, output);
    size_t at = output.find("MLENV_RAIL_BUSBW ");
    if (error.empty() && at == std::string::npos) error = "the rail test printed no figure";
    if (!error.empty()) {
      figure.error = error;
      return figure;
    }
    figure.busbw_gbps = std::strtod(output.c_str() + at + 17, nullptr);
    return figure;
  }

  // Runs /proc/self/exe with extra variables, collecting its stdout; kills it at the deadline.
  // Returns why it failed, or "".
  static std::string run_child(const std::vector<std::pair<std::string, std::string> >& env,
                               double timeout_s, std::string& output) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return "pipe failed";
    pid_t pid = ::fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
      ::dup2(pipe_fds[1], STDOUT_FILENO);
      for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
      char name[] = "mlenv-boot";
      char* argv[] = {name, nullptr};
      ::execv("/proc/self/exe", argv);
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    Clock::time_point deadline = time_after(Clock::now(), timeout_s + 5);
    char buffer[4096];
    for (;;) {
      pollfd fd{pipe_fds[0], POLLIN, 0};
      int ready = ::poll(&fd, 1, poll_timeout_ms(deadline));
      if (ready > 0) {
        ssize_t got = ::read(pipe_fds[0], buffer, sizeof buffer);
        if (got <= 0) break;
        output.append(buffer, static_cast<size_t>(got));
      } else if (Clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        break;
      }
    }
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return "the rail test did not finish before the deadline";
    if (WEXITSTATUS(status) != 0) {
      return "the rail test failed (exit " + std::to_string(WEXITSTATUS(status)) +
             "): no usable connection over this HCA";
    }
    return "";
  }

  std::vector<std::string> rails_;
  LocalRanks ranks_;
  int local_ = 1;
  int node_rank_ = 0;
  int world_ = 1;
  int first_rank_ = 0;
  size_t bytes_ = 0;
};

}  // namespace

std::string make_nccl_unique_id() {
  ncclUniqueId id;
  ncclResult_t result = ncclGetUniqueId(&id);
  if (result != ncclSuccess) fail_nccl("ncclGetUniqueId", result);
  return to_hex(id);
}

std::unique_ptr<Collective> make_nccl_collective(const std::vector<std::string>& rails) {
  return std::make_unique<NcclCollective>(rails);
}

std::optional<int> run_rail_step_child() {
  const char* text = std::getenv(kRailStepVariable);
  if (!text) return std::nullopt;
  JsonParseResult parsed = parse_json(text);
  if (!parsed.value || !parsed.value->is_object()) {
    log_error(std::string(kRailStepVariable) + " is not a JSON object");
    return kExitConfigError;
  }
  const Json& request = *parsed.value;
  auto number = [&](const char* key) {
    const Json* value = request.find(key);
    return value && value->is_number() ? value->as_number() : 0.0;
  };
  const Json* id = request.find("unique_id");
  int local = static_cast<int>(number("local"));
  int nranks = static_cast<int>(number("nranks"));
  int first = static_cast<int>(number("first_rank"));
  size_t bytes = static_cast<size_t>(number("bytes"));
  Clock::time_point deadline = time_after(Clock::now(), number("timeout_s"));
  try {
    LocalRanks ranks;
    ranks.allocate(local, bytes, static_cast<float>(first + 1));
    ncclUniqueId unique = from_hex(id && id->is_string() ? id->as_string() : "");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t group = ncclGroupStart();
    for (int i = 0; i < local && group == ncclSuccess; ++i) {
      check_cuda(cudaSetDevice(i), "cudaSetDevice");
      ncclResult_t init = ncclCommInitRankConfig(&ranks.comms[static_cast<size_t>(i)], nranks,
                                                 unique, first + i, &config);
      if (init != ncclSuccess && init != ncclInProgress) fail_nccl("ncclCommInitRankConfig", init);
    }
    group = ncclGroupEnd();
    if (group != ncclSuccess && group != ncclInProgress) fail_nccl("ncclGroupEnd", group);
    wait_for_comms(ranks.comms, deadline, "ncclCommInitRankConfig");
    double seconds = ranks.time_calls(ranks.comms, bytes / sizeof(float), deadline);
    double busbw = allreduce_busbw(algorithm_bandwidth(bytes, seconds), nranks);
    destroy_all(ranks.comms, deadline);
    std::printf("MLENV_RAIL_BUSBW %.6f\n", busbw);
    return kExitOk;
  } catch (const BootError& failure) {
    log_error(failure.what());
    return kExitNcclCheckError;
  }
}

#endif

}  // namespace boot
