#include "compiler/check/rules_acceptance.h"

#include <regex>

#include "compiler/base/quantity.h"
#include "compiler/check/gpu_products.h"
#include "compiler/check/value_paths.h"

namespace mlenv::check {

std::optional<std::int64_t> gpu_memory_bytes(const Value* cluster) {
  const std::string memory = text_at(cluster, {"gpus", "memory"});
  if (!memory.empty()) return quantity_integer(memory);
  const std::string product = text_at(cluster, {"gpus", "product"});
  if (const GpuProduct* known = find_gpu_product(product)) return known->memory_bytes;
  // Else the label may name the memory in decimal GB ("NVIDIA-A100-SXM4-40GB"); "NVIDIA-H200"
  // names none.
  static const std::regex kSize(R"((?:^|-)(\d+)GB(?:-|$))");
  std::smatch match;
  if (!std::regex_search(product, match, kSize)) return std::nullopt;
  return std::stoll(match[1].str()) * 1000000000LL;
}

void check_acceptance_memory(const Value& env, const Value* cluster, Diagnostics& diagnostics) {
  const Value* acceptance = env.get("acceptance");
  if (!acceptance) return;
  std::optional<std::int64_t> gpu = gpu_memory_bytes(cluster);
  const std::string max_text = text_at(acceptance, {"max_bytes"});
  if (!gpu || max_text.empty()) return;
  const std::int64_t max_bytes = quantity_integer(max_text).value_or(0);
  // Outside mlenv-boot's 8 B to 1 TiB, E0304 reports the value itself.
  if (max_bytes < 8 || max_bytes > (std::int64_t{1} << 40)) return;
  // mlenv-boot allocates a send and a receive buffer of max_bytes on every GPU.
  const long double needed = 2.0L * max_bytes + kGpuReserveBytes;
  if (needed <= static_cast<long double>(*gpu)) return;
  const auto gib = [](long double bytes) {
    return std::to_string(static_cast<long long>(bytes / (1LL << 30))) + " GiB";
  };
  Diagnostic& d =
      diagnostics.report(Code::E0440, range_at(*acceptance, {"max_bytes"}),
                         "the sweep's buffers do not fit the GPU: 2 x max_bytes " + max_text +
                             " + " + gib(kGpuReserveBytes) + " for NCCL is " + gib(needed) +
                             ", the GPU has " + gib(static_cast<long double>(*gpu)),
                         "lower `max_bytes` to at most " +
                             gib((static_cast<long double>(*gpu) - kGpuReserveBytes) / 2) +
                             " (nccl-tests' plateau is reached well before)");
  if (const Value* product = get_path(cluster, {"gpus", "product"})) {
    d.notes.push_back({"the GPU's memory, from its product label", product->range});
  }
}

}  // namespace mlenv::check
