#pragma once
// Rules on an acceptance run's NCCL sweep (E0440): what mlenv-boot would only find out on the
// GPUs, after the job was scheduled, is refused at check.

#include <cstdint>
#include <optional>
#include <string>

#include "compiler/check/value.h"
#include "compiler/diag/diagnostic.h"

namespace mlenv::check {

/// The memory of one GPU: the cluster's `gpus.memory`, else the size in its
/// `nvidia.com/gpu.product` label ("NVIDIA-H100-80GB-HBM3": 80 GB); nullopt when neither says.
std::optional<std::int64_t> gpu_memory_bytes(const Value* cluster);

/// The device memory NCCL and the CUDA context take beside the sweep's buffers.
inline constexpr std::int64_t kGpuReserveBytes = std::int64_t{1} << 30;

/// E0440: the sweep's send and receive buffers (2 x max_bytes on each GPU) plus the reserve do
/// not fit the GPU's memory.
void check_acceptance_memory(const Value& env, const Value* cluster, Diagnostics& diagnostics);

}  // namespace mlenv::check
