// The day-2 commands of platform local (local_drivers.h): the env's processes and the files of
// its `run/` folder, on this machine.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "compiler/apply/runner.h"
#include "compiler/day2/line_stream.h"
#include "compiler/diag/render.h"
#include "targets/local/local_container.h"
#include "targets/local/local_drivers.h"
#include "targets/local/local_processes.h"

namespace mlenv::plan::day2 {
namespace {

using target::local::node_state;
using target::local::NodeState;
using target::local::rank_file;

int ranks(const AppliedEnv& env) {
  return std::max(env.nodes, 1);
}

std::string state_text(const NodeState& state) {
  if (state.running) return "running";
  if (state.exit_code) return "exited " + std::to_string(*state.exit_code);
  return state.pid ? "ended without a status" : "not started";
}

// A rank's log read from where the last read stopped; `partial` holds a line not yet ended.
struct RankLog {
  int rank = 0;
  std::string path;
  std::streamoff offset = 0;
  std::string partial;
};

// Prints the whole lines `log` gained since the last call as `[rank] line` (and a last line
// without a newline when `flush`).
void print_new_lines(RankLog& log, bool flush, std::ostream& out) {
  std::ifstream in(log.path, std::ios::binary);
  if (in) {
    in.seekg(log.offset);
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    log.offset += static_cast<std::streamoff>(chunk.size());
    log.partial += chunk;
  }
  std::size_t start = 0;
  for (std::size_t end; (end = log.partial.find('\n', start)) != std::string::npos; start = end + 1)
    out << "[" << log.rank << "] " << printable(log.partial.substr(start, end - start)) << '\n';
  log.partial.erase(0, start);
  if ((flush && !log.partial.empty()) || log.partial.size() > kMaxLine) {
    out << "[" << log.rank << "] " << printable(log.partial) << '\n';
    log.partial.clear();
  }
}

int refuse_here(const AppliedEnv& env, std::string_view command, std::string_view instead,
                Diagnostics& diagnostics) {
  diagnostics.report(Code::E0755, {},
                     "`mlenvc " + std::string(command) + "` reaches into pods, and `" + env.unit +
                         "` runs as processes of this machine (platform local)",
                     std::string(instead));
  return 1;
}

}  // namespace

bool LocalDay2Driver::status(AppliedEnv env, const EnvRequest&, std::ostream& out,
                             Diagnostics&) const {
  const std::string runtime = target::local::recorded_runtime(env.dir);
  out << env.unit << " ("
      << (runtime.empty() ? "local processes"
                          : "containers of " + target::local::container_name(env.unit, 0) +
                                "... with " + runtime)
      << ", " << env.plan.env_kind << ", " << ranks(env) << (ranks(env) == 1 ? " node" : " nodes")
      << ")\n";
  std::vector<std::vector<std::string>> rows = {{"RANK", "PID", "STATE"}};
  for (int rank = 0; rank < ranks(env); ++rank) {
    NodeState state = node_state(env.dir, rank);
    rows.push_back(
        {std::to_string(rank), state.pid ? std::to_string(state.pid) : "-", state_text(state)});
  }
  print_table(out, rows);
  out << "  logs: " << rank_file(env.dir, 0, "log") << " ...\n";
  return true;
}

int LocalDay2Driver::logs(AppliedEnv env, const LogsRequest& request, std::ostream& out,
                          Diagnostics& diagnostics) const {
  if (request.rank && !check_rank(env, *request.rank, diagnostics)) return 1;
  std::vector<RankLog> logs;
  for (int rank = 0; rank < ranks(env); ++rank) {
    if (!request.rank || *request.rank == rank)
      logs.push_back({rank, rank_file(env.dir, rank, "log"), 0, ""});
  }
  // With -f: lines as the nodes write them, until no node runs; the state is asked before
  // each read, so the last read sees every line.
  for (;;) {
    bool running = false;
    for (const RankLog& log : logs) running = running || node_state(env.dir, log.rank).running;
    const bool last = !request.follow || !running;
    for (RankLog& log : logs) print_new_lines(log, last, out);
    out.flush();
    if (last) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

int LocalDay2Driver::shell(AppliedEnv env, const ShellRequest& request,
                           Diagnostics& diagnostics) const {
  if (!check_rank(env, request.rank, diagnostics)) return 1;
  NodeState state = node_state(env.dir, request.rank);
  // A node in a container: a shell there, in the env directory (mounted at its own path).
  const std::string runtime = target::local::recorded_runtime(env.dir);
  if (!runtime.empty() && state.running) {
    return run_attached(target::local::exec_command(
        runtime, target::local::container_name(env.unit, request.rank), env.dir, request.tty));
  }
  std::optional<std::vector<std::string>> vars =
      state.running ? target::local::node_environment(state.pid) : std::nullopt;
  if (!vars) {
    diagnostics.report(Code::E0752, {},
                       "rank " + std::to_string(request.rank) + " of `" + env.unit + "` is " +
                           state_text(state) +
                           ", and no process of it has its command's "
                           "environment",
                       "see `mlenvc status " + env.unit + "`");
    return 1;
  }
  // The command's own environment (RANK, WORLD_SIZE, MASTER_ADDR, NCCL_*, the job token), in
  // the env directory where it runs: given to execve, not as `env NAME=value` arguments, which
  // any user of the machine reads in /proc/PID/cmdline (issue 32).
  const char* shell = std::getenv("SHELL");
  return run_attached({shell && *shell == '/' ? shell : "/bin/sh"}, &*vars, env.dir);
}

int LocalDay2Driver::sync(AppliedEnv env, const SyncRequest&, std::ostream&,
                          Diagnostics& diagnostics) const {
  return refuse_here(env, "sync",
                     "the env runs in its plan directory on this machine: copy files there",
                     diagnostics);
}

int LocalDay2Driver::port_forward(AppliedEnv env, const PortForwardRequest&,
                                  Diagnostics& diagnostics) const {
  return refuse_here(env, "port-forward", "its ports are this machine's: connect to localhost",
                     diagnostics);
}

int LocalDay2Driver::urls(AppliedEnv env, const EnvRequest&, std::ostream&,
                          Diagnostics& diagnostics) const {
  return refuse_here(env, "urls", "a local env has no Routes: its tools listen on localhost",
                     diagnostics);
}

int LocalDay2Driver::dev_session(AppliedEnv env, const DevSessionRequest&, std::ostream&,
                                 Diagnostics& diagnostics) const {
  return refuse_here(env, "dev-session",
                     "the env runs in its plan directory on this machine: edit files there",
                     diagnostics);
}

std::optional<ResultsSource> LocalDay2Driver::results(const PlanManifest& env,
                                                      const ResultsRequest&,
                                                      Diagnostics& diagnostics) const {
  diagnostics.report(Code::E0755, {},
                     "`mlenvc results` reads a pod's log, and `" + env.cluster + "/" + env.env +
                         "` runs as processes of this machine (platform local)",
                     "rank 0's log is run/rank-0.log in the env directory");
  return std::nullopt;
}

}  // namespace mlenv::plan::day2
