#include "compiler/apply/build_context.h"

#include <stdlib.h>

#include <filesystem>
#include <system_error>

#include "targets/common/dockerfile.h"

namespace mlenv::plan {

namespace fs = std::filesystem;

std::vector<ContextPath> build_context_paths(const std::string& dockerfile) {
  return {{dockerfile, "Dockerfile"}, {target::kRuntimeDir, target::kRuntimeDir}};
}

BuildContext::BuildContext(const std::string& root, const std::vector<ContextPath>& paths) {
  std::string pattern = (fs::temp_directory_path() / "mlenv-build-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    error_ = "cannot make a temporary directory in " + fs::temp_directory_path().string();
    return;
  }
  path_ = pattern;
  for (const ContextPath& path : paths) {
    std::error_code error;
    // One that is missing is left out: the build then fails as it would on the whole tree.
    if (!fs::exists(fs::symlink_status(fs::path(root) / path.from))) continue;
    const fs::path to = fs::path(path_) / path.to;
    fs::create_directories(to.parent_path(), error);
    if (!error)
      fs::copy(fs::path(root) / path.from, to,
               fs::copy_options::recursive | fs::copy_options::copy_symlinks, error);
    if (error) {
      error_ = "cannot copy " + path.from + " into the build context: " + error.message();
      return;
    }
  }
}

BuildContext::~BuildContext() {
  std::error_code ignored;
  if (!path_.empty()) fs::remove_all(path_, ignored);
}

}  // namespace mlenv::plan
