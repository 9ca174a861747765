#pragma once
// The sources of runtime/ (mlenv-boot), compiled into mlenvc so that every output tree
// carries them under `_runtime/` and image builds never fetch this project.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlenv::target {

/// Every embedded runtime file: its path relative to runtime/, and its bytes; sorted by path.
std::vector<std::pair<std::string_view, std::string_view>> runtime_sources();

}  // namespace mlenv::target
