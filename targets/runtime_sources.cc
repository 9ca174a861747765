#include "targets/runtime_sources.h"

#include <algorithm>

#include "compiler/base/embedded.h"

namespace mlenv {
extern const EmbeddedFile kRuntimeSources[];
extern const std::size_t kRuntimeSources_count;
}  // namespace mlenv

namespace mlenv::target {

std::vector<std::pair<std::string_view, std::string_view>> runtime_sources() {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (std::size_t i = 0; i < kRuntimeSources_count; ++i) {
    out.emplace_back(kRuntimeSources[i].path, kRuntimeSources[i].bytes);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mlenv::target
