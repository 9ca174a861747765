#include "compiler/check/gpu_products.h"

#include <algorithm>
#include <cctype>

#include "compiler/diag/diagnostic.h"

namespace mlenv::check {
namespace {

constexpr std::int64_t kGB = 1000000000;

// GPU feature discovery labels a node with its GPU's NVML name, spaces turned into `-` and
// characters outside [A-Za-z0-9-_.] dropped (NVIDIA/k8s-device-plugin internal/lm/resource.go,
// `sanitise`; the GPU operator runs it). The NVML names are those `nvidia-smi -L` prints
// ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: ...)"); the memory is the datasheet's, in GB:
// A100 (nvidia.com/en-us/data-center/a100, 40 or 80 GB), H100 (…/h100: SXM 80 GB, NVL 94 GB),
// H200 (…/h200: 141 GB), B200 (DGX B200 datasheet: 1,440 GB for 8 GPUs), L40S and L40 (48 GB),
// L4 (24 GB), A40 (48 GB), A30 (24 GB), A10 (24 GB), V100 (16 or 32 GB), T4 (16 GB).
const std::vector<GpuProduct> kProducts = {
    {"NVIDIA-A100-SXM4-40GB", 40 * kGB},
    {"NVIDIA-A100-SXM4-80GB", 80 * kGB},
    {"NVIDIA-A100-PCIE-40GB", 40 * kGB},
    {"NVIDIA-A100-80GB-PCIe", 80 * kGB},
    {"NVIDIA-H100-80GB-HBM3", 80 * kGB},
    {"NVIDIA-H100-PCIe", 80 * kGB},
    {"NVIDIA-H100-NVL", 94 * kGB},
    {"NVIDIA-H200", 141 * kGB},
    {"NVIDIA-H200-NVL", 141 * kGB},
    {"NVIDIA-B200", 180 * kGB},
    {"NVIDIA-L40S", 48 * kGB},
    {"NVIDIA-L40", 48 * kGB},
    {"NVIDIA-L4", 24 * kGB},
    {"NVIDIA-A40", 48 * kGB},
    {"NVIDIA-A30", 24 * kGB},
    {"NVIDIA-A10", 24 * kGB},
    {"Tesla-V100-SXM2-16GB", 16 * kGB},
    {"Tesla-V100-SXM2-32GB", 32 * kGB},
    {"Tesla-V100-PCIE-32GB", 32 * kGB},
    {"Tesla-T4", 16 * kGB},
};

// The label without the suffixes GPU feature discovery adds: `-MIG-<profile>` under the MIG
// `single` strategy, `-SHARED` for time-sliced or MPS-shared GPUs (resource.go,
// getProductName).
std::string_view whole_gpu(std::string_view label) {
  if (label.ends_with("-SHARED")) label.remove_suffix(7);
  if (std::size_t mig = label.find("-MIG-"); mig != std::string_view::npos)
    label = label.substr(0, mig);
  return label;
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The model of a label: its first part after the vendor (`H100` of "NVIDIA-H100-80GB-HBM3").
std::string model_of(std::string_view label) {
  std::string text = upper(label);
  std::size_t begin = text.find('-');
  if (begin == std::string::npos) return text;
  std::size_t end = text.find('-', begin + 1);
  return text.substr(begin + 1, end == std::string::npos ? end : end - begin - 1);
}

}  // namespace

const std::vector<GpuProduct>& known_gpu_products() {
  return kProducts;
}

const GpuProduct* find_gpu_product(std::string_view label) {
  std::string_view whole = whole_gpu(label);
  auto it = std::find_if(kProducts.begin(), kProducts.end(),
                         [&](const GpuProduct& p) { return p.label == whole; });
  return it == kProducts.end() ? nullptr : &*it;
}

std::vector<std::string> near_gpu_products(std::string_view label) {
  std::vector<std::string> near;
  const std::string model = model_of(whole_gpu(label));
  for (const GpuProduct& p : kProducts) {
    if (model_of(p.label) == model) near.emplace_back(p.label);
  }
  if (!near.empty()) return near;
  std::vector<std::string> all;
  for (const GpuProduct& p : kProducts) all.emplace_back(p.label);
  std::string closest = closest_name(whole_gpu(label), all);
  if (!closest.empty()) near.push_back(closest);
  return near;
}

}  // namespace mlenv::check
