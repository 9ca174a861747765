#pragma once
// The processes of a local env (platform local): each node is one session (setsid) led by a
// shell that runs mlenv-boot and then writes its exit status. Each rank's pid, exit status and
// log, and the job token, are files of the env directory's git-ignored `run/`.

#include <optional>
#include <string>
#include <vector>

namespace mlenv::target::local {

/// `<env_dir>/run/rank-<rank>.<suffix>`: `pid`, `start` (the pid's start time), `exit` or `log`.
std::string rank_file(const std::string& env_dir, int rank, const char* suffix);

/// Writes a new random job token into `<env_dir>/run/token` (mode 0600) and returns it;
/// nullopt with `error` when it cannot.
std::optional<std::string> write_token(const std::string& env_dir, std::string& error);

/// Starts rank `rank` of the env in `env_dir` in a session of its own: `command` (mlenv-boot
/// `--config boot.json`, or the container runtime's `run` of it) in the env directory, its rank
/// and `token` in its environment (MLENV_NODE_RANK, MLENV_JOB_TOKEN), output to its log;
/// writes the pid file and the start file. Returns the pid (the session id), or nullopt with
/// `error`.
std::optional<int> start_node(const std::string& env_dir, const std::vector<std::string>& command,
                              int rank, const std::string& token, std::string& error);

/// The start time of process `pid` (proc(5) field 22, clock ticks after boot), nullopt once
/// it is gone: with the pid, what tells a node from a process that reused its id.
std::optional<unsigned long long> start_time(int pid);

/// Whether session `sid` is the one whose leader started at `start` (nullopt: recorded without
/// a start time, the id alone): its leader, while alive, started then.
bool is_session(int sid, std::optional<unsigned long long> start);

/// `SID:START`, how a pid file and apply's record name a node's session.
std::string session_record(int sid);

/// The session a record (`SID:START`, or a bare `SID`) names, when it is that session and a
/// process of it runs; nullopt otherwise.
std::optional<int> recorded_session(const std::string& record);

/// What a rank is doing now, from its files and /proc.
struct NodeState {
  int pid = 0;                   ///< its session; 0 when it was never started (no pid file)
  bool running = false;          ///< a process of its session is alive
  std::optional<int> exit_code;  ///< mlenv-boot's exit status once it ended
};

/// The state of rank `rank` of the env in `env_dir`.
NodeState node_state(const std::string& env_dir, int rank);

/// The pids of every live process of session `sid` (its leader's descendants that kept it).
std::vector<int> session_processes(int sid);

/// Ends the sessions `sids`: SIGTERM to each of their processes, up to `grace_seconds` for
/// them to end, then SIGKILL. True when no process of them is left.
bool stop_sessions(const std::vector<int>& sids, int grace_seconds);

/// The environment (`NAME=value` strings) of rank's command: the process of session `sid`
/// that mlenv-boot gave `RANK`; nullopt when none is alive.
std::optional<std::vector<std::string>> node_environment(int sid);

}  // namespace mlenv::target::local
