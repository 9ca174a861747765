#pragma once
// The GPUs mlenvc knows by their `nvidia.com/gpu.product` node label: the memory of each, for
// the acceptance sweep (E0440), and the names an unknown product is near (W0407).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlenv::check {

/// A product label that GPU feature discovery sets, and the memory of one such GPU.
struct GpuProduct {
  std::string_view label;  ///< "NVIDIA-H100-80GB-HBM3"
  std::int64_t memory_bytes;
};

/// Every GPU mlenvc knows, in the table's order.
const std::vector<GpuProduct>& known_gpu_products();

/// The known GPU that `label` names: itself, or a MIG or shared form of it
/// ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "NVIDIA-L40S-SHARED"); nullptr when none.
const GpuProduct* find_gpu_product(std::string_view label);

/// Known labels an unknown `label` is near: those of the same model ("NVIDIA-H100-80GB" is an
/// H100), else the one closest in spelling; none when nothing is near.
std::vector<std::string> near_gpu_products(std::string_view label);

}  // namespace mlenv::check
