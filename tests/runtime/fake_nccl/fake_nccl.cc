// A host-only fake of the CUDA runtime and of NCCL, for the part that runtime/collective_nccl.cc
// calls, so that the NCCL backend's host logic (launch, wait, deadline, abort, split) runs in CI
// without a GPU. "Device" memory is host memory and every rank lives in this process (one node),
// but the fake keeps the contract of NCCL 2.28's non-blocking communicators (NVIDIA/nccl
// 5067397c), on which that logic depends:
//  - init and split on a non-blocking communicator return ncclInProgress, and the communicator
//    stays in progress until ncclCommGetAsyncError has seen it complete (src/init.cc,
//    ncclCommInitRankConfig and ncclCommGetAsyncError);
//  - a collective of several ranks on a non-blocking communicator is launched by a thread of its
//    own: ncclGroupEnd, or the implicit group of a call outside one, returns ncclInProgress and
//    leaves every communicator of the group in progress (src/group.cc, ncclGroupEndInternal);
//  - a call on a communicator still in progress is refused with ncclInvalidArgument ("Attempt to
//    use communicator before the previous operation returned ncclSuccess", src/init.cc,
//    ncclCommEnsureReady, called by every collective and by ncclCommSplit);
//  - a one-rank all-reduce is a copy launched at once, without a group job (src/enqueue.cc,
//    taskAppend: ncclLaunchOneRank);
//  - a split runs in its parent's mode and leaves *newcomm NULL until it completes (src/group.cc,
//    ncclAsyncLaunch; src/init.cc, ncclCommInitChildComm).
// Knobs, from the environment:
//   MLENV_FAKE_GPUS=N        the devices (default 0: no GPU)
//   MLENV_FAKE_NCCL_STALL=1  an all-reduce of several ranks never completes on the "device"
// At exit it prints `fake-nccl: C communicators created, A aborted, L live` on stderr.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

struct FakeCudaStream {
  bool stalled = false;  // a kernel on it never finishes
};

struct FakeCudaEvent {
  bool stalled = false;
};

struct FakeNcclComm {
  std::string world;  // the communicator's identity: its unique id, or its parent's and color
  int nranks = 1;
  int rank = 0;
  bool blocking = true;
  ncclResult_t state = ncclSuccess;
  int polls_left = 0;             // ncclCommGetAsyncError calls until it completes
  FakeNcclComm* child = nullptr;  // a split's result, published when this completes
  ncclComm_t* child_out = nullptr;
};

namespace {

struct Reduce {
  FakeNcclComm* comm;
  const float* send;
  float* recv;
  size_t count;
  FakeCudaStream* stream;
};

struct Split {
  FakeNcclComm* parent;
  int color;
  int key;
  ncclComm_t* out;
  bool blocking;
};

struct Fake {
  int devices = 0;
  bool stall = false;
  int depth = 0;  // ncclGroupStart nesting
  std::vector<FakeNcclComm*> joined;
  std::vector<Reduce> reduces;
  std::vector<Split> splits;
  std::map<std::string, int> splits_of;  // per parent world: how many splits it has made
  int created = 0, aborted = 0, live = 0, ids = 0;

  Fake() {
    if (const char* gpus = std::getenv("MLENV_FAKE_GPUS")) devices = std::atoi(gpus);
    const char* stall_text = std::getenv("MLENV_FAKE_NCCL_STALL");
    stall = stall_text && std::strcmp(stall_text, "1") == 0;
  }
  ~Fake() {
    std::fprintf(stderr, "fake-nccl: %d communicators created, %d aborted, %d live\n", created,
                 aborted, live);
  }
};

Fake& fake() {
  static Fake instance;
  return instance;
}

FakeNcclComm* make_comm(std::string world, int nranks, int rank, bool blocking) {
  ++fake().created;
  ++fake().live;
  return new FakeNcclComm{std::move(world), nranks, rank, blocking};
}

// A non-blocking communicator's work goes to a thread: in progress until polled to completion.
ncclResult_t start_async(FakeNcclComm* comm) {
  if (comm->blocking) return ncclSuccess;
  comm->state = ncclInProgress;
  comm->polls_left = 2;
  return ncclInProgress;
}

void join(FakeNcclComm* comm) {
  if (std::find(fake().joined.begin(), fake().joined.end(), comm) == fake().joined.end()) {
    fake().joined.push_back(comm);
  }
}

// Sums each world's contributions into every receive buffer; a world missing a rank stalls.
void run_reduces() {
  std::map<std::string, std::vector<Reduce>> by_world;
  for (const Reduce& reduce : fake().reduces) by_world[reduce.comm->world].push_back(reduce);
  for (auto& [world, parts] : by_world) {
    bool complete = static_cast<int>(parts.size()) == parts[0].comm->nranks && !fake().stall;
    if (!complete) {
      for (Reduce& part : parts) part.stream->stalled = true;
      continue;
    }
    std::vector<float> sum(parts[0].count, 0.0f);
    for (const Reduce& part : parts) {
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += part.send[i];
    }
    for (Reduce& part : parts) std::copy(sum.begin(), sum.end(), part.recv);
  }
  fake().reduces.clear();
}

// Every split of the group with one color (and one parent world) makes one child world, ranked
// by key; a parent completes, and publishes its child, when it is polled.
void run_splits() {
  std::map<std::pair<std::string, int>, std::vector<Split>> groups;
  for (const Split& split : fake().splits) {
    if (split.color != NCCL_SPLIT_NOCOLOR)
      groups[{split.parent->world, split.color}].push_back(split);
  }
  for (auto& [color, members] : groups) {
    std::sort(members.begin(), members.end(),
              [](const Split& a, const Split& b) { return a.key < b.key; });
    std::string world = color.first + "/" + std::to_string(color.second) + "#" +
                        std::to_string(fake().splits_of[color.first]);
    for (size_t i = 0; i < members.size(); ++i) {
      FakeNcclComm* child = make_comm(world, static_cast<int>(members.size()), static_cast<int>(i),
                                      members[i].blocking);
      members[i].parent->child = child;
      members[i].parent->child_out = members[i].out;
      if (members[i].parent->blocking) *members[i].out = child;
    }
  }
  for (const Split& split : fake().splits) ++fake().splits_of[split.parent->world];
  fake().splits.clear();
}

ncclResult_t end_group() {
  run_splits();
  run_reduces();
  ncclResult_t result = ncclSuccess;
  for (FakeNcclComm* comm : fake().joined) {
    if (start_async(comm) == ncclInProgress) result = ncclInProgress;
  }
  fake().joined.clear();
  return result;
}

// An explicit group ends at ncclGroupEnd; a call outside one is its own group.
ncclResult_t finish_call() {
  return fake().depth > 0 ? ncclSuccess : end_group();
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  *count = fake().devices;
  return fake().devices > 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaSetDevice(int device) {
  return device >= 0 && device < fake().devices ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaMalloc(void** pointer, size_t size) {
  *pointer = std::calloc(1, size);
  return *pointer ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void* pointer) {
  std::free(pointer);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* destination, const void* source, size_t count, cudaMemcpyKind) {
  std::memmove(destination, source, count);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  *stream = new FakeCudaStream;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  *event = new FakeCudaEvent;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  event->stalled = stream->stalled;
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  return event->stalled ? cudaErrorNotReady : cudaSuccess;
}

const char* cudaGetErrorString(cudaError_t error) {
  return error == cudaErrorNoDevice ? "no CUDA-capable device is detected" : "fake CUDA error";
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "fake NCCL error";
  }
}

ncclResult_t ncclGetVersion(int* version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id, 0, sizeof *id);
  std::snprintf(id->internal, sizeof id->internal, "fake-%d", ++fake().ids);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t* config) {
  if (nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  std::string world(id.internal, strnlen(id.internal, sizeof id.internal));
  *comm = make_comm(world, nranks, rank, !config || config->blocking != 0);
  join(*comm);
  return finish_call();
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
  if (comm->state == ncclInProgress) return ncclInvalidArgument;
  *newcomm = nullptr;
  fake().splits.push_back({comm, color, key, newcomm, !config || config->blocking != 0});
  join(comm);
  return finish_call();
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state) {
  if (comm->state == ncclInProgress && comm->polls_left-- <= 0) {
    comm->state = ncclSuccess;
    if (comm->child) *comm->child_out = comm->child;
    comm->child = nullptr;
  }
  *state = comm->state;
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (comm->state == ncclInProgress) return ncclInvalidArgument;
  return start_async(comm);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  --fake().live;
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  ++fake().aborted;
  return ncclCommDestroy(comm);
}

ncclResult_t ncclGroupStart() {
  ++fake().depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (fake().depth == 0) return ncclInvalidUsage;
  return --fake().depth > 0 ? ncclSuccess : end_group();
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t,
                           ncclRedOp_t, ncclComm_t comm, cudaStream_t stream) {
  if (comm->state == ncclInProgress) return ncclInvalidArgument;
  if (comm->nranks == 1) {
    std::memmove(recvbuff, sendbuff, count * sizeof(float));
    return ncclSuccess;
  }
  fake().reduces.push_back(
      {comm, static_cast<const float*>(sendbuff), static_cast<float*>(recvbuff), count, stream});
  join(comm);
  return finish_call();
}

}  // extern "C"
