#pragma once
// Golden diagnostics of plan, apply and the day-2 commands: tests/plan/golden/<CODE>.stderr,
// compared byte for byte; MLENV_UPDATE_GOLDEN=1 rewrites the files for review in git.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "tests/plan/support.h"

namespace mlenv::plan::testing {

inline void golden(const std::string& code, const std::string& text) {
  const std::string path = std::string(MLENV_PLAN_GOLDEN_DIR) + "/" + code + ".stderr";
  if (std::getenv("MLENV_UPDATE_GOLDEN") != nullptr) write_file(path, text);
  INFO("golden file " << path);
  CHECK(text.find((code[0] == 'W' ? "warning[" : "error[") + code + "]") != std::string::npos);
  CHECK(read_file(path) == text);
}

}  // namespace mlenv::plan::testing
