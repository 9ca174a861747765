#pragma once
// The day-2 commands (README.md, "After apply"): what users of the seeds' Makefile did after a
// deploy, through the platform's own clients (each provider's Day2Driver). Each returns the exit
// status: 0 done, 1 refused or failed with diagnostics reported, or the client's own status for
// shell and port-forward.

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/day2/applied_env.h"
#include "compiler/diag/diagnostic.h"

namespace mlenv::plan::day2 {

/// What every day-2 command is asked: the env and how to reach the cluster.
struct EnvRequest {
  std::string env;           ///< `ENV` or `CLUSTER/ENV`
  std::string client;        ///< --kubectl PATH; "" for the platform's client on PATH
  int timeout_seconds = 60;  ///< limit of each client call that ends by itself
  std::string context = {};  ///< --context NAME, passed to every oc/kubectl call; "" for none
};

/// Where mlenv-boot publishes the transport it chose (runtime/BOOT_CONFIG.md, status.json):
/// beside the shell environment the compiler places in the pod's /run/mlenv.
inline constexpr const char* kBootStatusFile = "/run/mlenv/status.json";

/// `mlenvc status [ENV]`: each rank's pod, node, phase, restarts and transport, the build and
/// the URLs; every applied env when `target.env` is empty.
int show_status(const EnvRequest& target, std::ostream& out, Diagnostics& diagnostics);

struct ShellRequest {
  EnvRequest target;
  int rank = 0;
  bool tty = false;  ///< stdin is a terminal: ask for one in the pod (`-t`)
};
/// `mlenvc shell ENV [--rank N]`: a login shell in rank N's pod, on the user's terminal.
int open_shell(const ShellRequest& request, Diagnostics& diagnostics);

struct LogsRequest {
  EnvRequest target;
  std::optional<int> rank;  ///< only this rank
  bool follow = false;      ///< -f: every rank at once, until they end or Ctrl-C
};
/// `mlenvc logs ENV [-f] [--rank N]`: each rank's log, every line prefixed `[rank] `.
int show_logs(const LogsRequest& request, std::ostream& out, Diagnostics& diagnostics);

struct SyncRequest {
  EnvRequest target;
  std::string dir;  ///< local directory whose contents go to /workspace
  bool watch = false;
  int poll_ms = 1000;  ///< --watch: how often the directory's files are compared
  /// --watch: asked before each look at the directory; false ends the watch (the command line
  /// never says false).
  std::function<bool()> keep_watching = [] { return true; };
};
/// `mlenvc sync ENV DIR [--watch]`: DIR's contents into /workspace of every pod (per-pod
/// storage) or of rank 0 (rwx: every pod mounts the same volume); --watch again on each change.
int sync_workspace(const SyncRequest& request, std::ostream& out, Diagnostics& diagnostics);

struct PortForwardRequest {
  EnvRequest target;
  std::string service = "debugpy";  ///< a name of plan.json `ports`
  int local_port = 0;               ///< 0: the same as the pod's
};
/// `mlenvc port-forward ENV [SERVICE]`: localhost:PORT to the port of SERVICE in rank 0's pod.
int port_forward(const PortForwardRequest& request, Diagnostics& diagnostics);

struct DevSessionRequest {
  EnvRequest target;
  std::string dir;     ///< local directory whose contents go to /workspace, on every change
  int local_port = 0;  ///< debugpy's local port; 0: the same as the pod's (5678)
  int poll_ms = 1000;  ///< how often the directory's files are compared
  /// Asked before each look at the directory, with SIGINT and SIGTERM: false ends the session.
  std::function<bool()> keep_watching = [] { return true; };
};
/// `mlenvc dev-session ENV DIR`: the seeds' `make dev-session` in one command. Forwards
/// localhost:5678 to debugpy in rank 0's pod (port-forward, in the background) while it syncs
/// DIR into /workspace and again on every change (sync --watch), until Ctrl-C or SIGTERM, or
/// the forward ends; the forward is then stopped (SIGTERM) and waited for. The errors of sync
/// and port-forward (E0754, E0753, E0752) before anything runs.
int dev_session(const DevSessionRequest& request, std::ostream& out, Diagnostics& diagnostics);

/// `mlenvc urls ENV`: the URL of each Route of the env.
int show_urls(const EnvRequest& target, std::ostream& out, Diagnostics& diagnostics);

/// E0754 unless `dir` is a directory; checked before the env is looked up.
bool check_sync_dir(const std::string& dir, Diagnostics& diagnostics);

/// E0751 unless `rank` is one of `env`'s ranks (0 to plan.json `nodes` - 1).
bool check_rank(const AppliedEnv& env, int rank, Diagnostics& diagnostics);

/// Writes `rows` as columns two spaces apart, each line indented by two; `rows[0]` is the header.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows);

/// Runs `argv` on the user's terminal (stdin, stdout and stderr inherited), without a deadline,
/// until it exits; mlenvc ignores Ctrl-C meanwhile, which the child handles. Returns its exit
/// status (127 when it could not start). With `environment`, the child has exactly that
/// environment (passed to execve, never in an argument other users read in /proc/PID/cmdline);
/// with `directory`, it runs there.
int run_attached(const std::vector<std::string>& argv,
                 const std::vector<std::string>* environment = nullptr,
                 const std::string& directory = "");

}  // namespace mlenv::plan::day2
