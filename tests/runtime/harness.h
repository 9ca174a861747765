#pragma once
// Test support: temporary trees, free loopback ports, and real mlenv-boot processes with bounded
// waits, so every test stops by itself even when the code under test hangs.

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "json.h"

namespace boot_test {

/// A temporary directory removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  /// Writes a file under the directory, creating its parent folders; returns its full path.
  std::string write(const std::string& relative, const std::string& content) const;
  /// Creates a symlink under the directory (dangling ones stand for unreadable sysfs files).
  void symlink(const std::string& relative, const std::string& target) const;
  /// Creates a folder under the directory.
  void mkdir(const std::string& relative) const;

 private:
  std::string path_;
};

/// A loopback TCP port that was free a moment ago (bound to port 0 and released).
int free_port();

/// The text of a file, empty when missing.
std::string slurp(const std::string& path);

/// A boot.json for tests: short timeouts, `overrides` replacing top-level keys.
boot::Json test_config(const boot::Json& overrides = boot::Json::object());

/// Writes a config into `dir` and returns its path.
std::string write_config(const TempDir& dir, const boot::Json& config,
                         const std::string& name = "boot.json");

/// The MLENV_JOB_TOKEN every start_boot process gets unless its `env` says otherwise.
inline constexpr const char* kTestJobToken = "test-job-token";

/// A running mlenv-boot with its stdout and stderr captured to files.
struct BootProcess {
  pid_t pid = -1;
  std::string out_path;
  std::string err_path;
  int exit_code = -1;  ///< set by wait_exit; 128+signal when killed
  double cpu_s = -1;   ///< user plus system CPU seconds, set by wait_exit

  std::string out() const { return slurp(out_path); }
  std::string err() const { return slurp(err_path); }
};

/// Starts mlenv-boot with arguments and extra environment variables (on top of the test's own,
/// minus the rank variables a CI runner might set, plus MLENV_JOB_TOKEN=kTestJobToken; an
/// empty value in `env` stands for an unset one). A non-zero `max_files` lowers its
/// RLIMIT_NOFILE, so running it out of descriptors takes few connections.
BootProcess start_boot(const TempDir& dir, const std::string& tag,
                       const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env = {}, int max_files = 0);

/// Waits for the process up to `timeout_s`, then SIGKILLs it; returns whether it exited in time.
bool wait_exit(BootProcess& process, double timeout_s);

/// Seconds on the monotonic clock, for measuring how long an exit took.
double now_s();

/// Whether a pid is gone or at least not a zombie of anybody.
bool is_zombie(pid_t pid);

/// Whether a process with this pid exists at all.
bool pid_alive(pid_t pid);

/// Waits until a file exists, up to `timeout_s`.
bool wait_for_file(const std::string& path, double timeout_s);

/// The lines of a KEY=VALUE file (as written by `env`) as a map.
std::map<std::string, std::string> read_env_file(const std::string& path);

}  // namespace boot_test
