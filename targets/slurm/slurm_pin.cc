#include "targets/slurm/slurm_pin.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "compiler/base/atomic_file.h"

namespace mlenv::plan {
namespace {

// `path` as a real directory, created when missing; false when it is anything else (a link
// could send the copy out of the env directory).
bool real_directory(const std::string& path, std::string& error) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    error = "cannot create " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = path + " is not a directory (a symbolic link is not followed)";
    return false;
  }
  return true;
}

}  // namespace

std::string pinned_config_path(const BlobId& id) {
  return std::string(kAppliedDir) + "/boot-" + to_hex(id) + ".json";
}

bool make_applied_dir(const std::string& env_dir, std::string& error) {
  return real_directory(env_dir + "/logs", error) &&
         real_directory(env_dir + "/" + std::string(kAppliedDir), error);
}

std::optional<std::string> pin_boot_config(const EnvPlan& env, const std::string& env_dir,
                                           std::string& error) {
  const std::string committed = env.dir + "/" + std::string(kSlurmBootConfig);
  const PlanEntry* entry = env.files.find(committed);
  std::optional<std::string> bytes = entry ? env.files.read(committed) : std::nullopt;
  if (!bytes) {
    error = "HEAD has no " + committed;
    return std::nullopt;
  }
  const std::string relative = pinned_config_path(entry->id);
  if (!make_applied_dir(env_dir, error) ||
      !write_file_atomic(env_dir + "/" + relative, *bytes, 0644, error)) {
    return std::nullopt;
  }
  return relative;
}

}  // namespace mlenv::plan
