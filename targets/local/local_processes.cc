#include "targets/local/local_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "targets/local/local_target.h"

extern char** environ;

namespace mlenv::target::local {
namespace {

namespace fs = std::filesystem;

std::string run_dir(const std::string& env_dir) {
  return env_dir + "/" + target::local::kRunDir;
}

// The whole of a small file, or nullopt when it cannot be read. A /proc file of a process that
// exits meanwhile fails its read (ESRCH), which libstdc++'s filebuf throws.
std::optional<std::string> read_whole(const std::string& path) {
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int> read_int(const std::string& path) {
  std::optional<std::string> text = read_whole(path);
  if (!text) return std::nullopt;
  try {
    return std::stoi(*text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The fields of /proc/PID/stat after the `(comm)` that may hold spaces, from field 3 (state);
// nullopt once the process is gone.
std::optional<std::vector<std::string>> stat_fields(int pid) {
  std::optional<std::string> stat = read_whole("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  std::size_t close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream words(stat->substr(close + 1));
  std::vector<std::string> fields;
  for (std::string word; words >> word;) fields.push_back(word);
  return fields;
}

// The session of process `pid` (proc(5): field 6); nullopt once it is gone. A zombie still
// counts: its parent has not reaped it, but it runs nothing, so it is left out.
std::optional<int> session_of(int pid) {
  std::optional<std::vector<std::string>> fields = stat_fields(pid);
  if (!fields || fields->size() < 4 || (*fields)[0] == "Z" || (*fields)[0] == "X")
    return std::nullopt;
  try {
    return std::stoi((*fields)[3]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The environment for rank's process: ours, with its rank and the job token set.
std::vector<std::string> node_env(int rank, const std::string& token) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with(std::string(target::local::kRankVariable) + "=") ||
        entry.starts_with("MLENV_JOB_TOKEN="))
      continue;
    env.emplace_back(entry);
  }
  env.push_back(std::string(target::local::kRankVariable) + "=" + std::to_string(rank));
  env.push_back("MLENV_JOB_TOKEN=" + token);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::optional<unsigned long long> start_time(int pid) {
  // proc(5): field 22, starttime; fields[0] is field 3.
  std::optional<std::vector<std::string>> fields = stat_fields(pid);
  if (!fields || fields->size() < 20) return std::nullopt;
  try {
    return std::stoull((*fields)[19]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool is_session(int sid, std::optional<unsigned long long> start) {
  if (!start) return true;  // recorded before start times were: the id alone
  // While the leader lives, its start time tells it from a process that reused its id. Once
  // it ended, the id is not reused while a process of the session keeps it as its session id
  // (Linux frees a pid only when no task uses it as pid, group or session: kernel/pid.c).
  std::optional<unsigned long long> now = start_time(sid);
  return !now || *now == *start;
}

std::string session_record(int sid) {
  std::optional<unsigned long long> start = start_time(sid);
  return std::to_string(sid) + (start ? ":" + std::to_string(*start) : "");
}

std::optional<int> recorded_session(const std::string& record) {
  std::size_t colon = record.find(':');
  try {
    int sid = std::stoi(record.substr(0, colon));
    std::optional<unsigned long long> start;
    if (colon != std::string::npos) start = std::stoull(record.substr(colon + 1));
    if (sid > 0 && is_session(sid, start) && !session_processes(sid).empty()) return sid;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::string rank_file(const std::string& env_dir, int rank, const char* suffix) {
  return run_dir(env_dir) + "/rank-" + std::to_string(rank) + "." + suffix;
}

std::optional<std::string> write_token(const std::string& env_dir, std::string& error) {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof bytes)) {
    error = "cannot read /dev/urandom";
    return std::nullopt;
  }
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) token += {kHex[b >> 4], kHex[b & 15]};
  const std::string path = run_dir(env_dir) + "/token";
  // Created 0600 before a byte is written: no other user ever reads it.
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || ::write(fd, token.data(), token.size()) != static_cast<ssize_t>(token.size())) {
    error = path + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return std::nullopt;
  }
  ::close(fd);
  return token;
}

std::optional<int> start_node(const std::string& env_dir, const std::vector<std::string>& command,
                              int rank, const std::string& token, std::string& error) {
  const std::string log = rank_file(env_dir, rank, "log");
  const std::string exit_file = rank_file(env_dir, rank, "exit");
  ::unlink(exit_file.c_str());
  // The shell leads the session and outlives mlenv-boot to record its exit status, which
  // nobody else can collect once apply has exited. The status lands by rename: whole or not.
  std::vector<std::string> argv = {
      "/bin/sh", "-c",
      "f=$1; shift; \"$@\"; code=$?; echo $code >\"$f.new\"; mv -f \"$f.new\" \"$f\"",
      "mlenv-local", exit_file};
  argv.insert(argv.end(), command.begin(), command.end());
  std::vector<std::string> env = node_env(rank, token);
  std::vector<char*> argv_p = pointers(argv);
  std::vector<char*> env_p = pointers(env);
  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (pid == 0) {
    ::setsid();
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || ::chdir(env_dir.c_str()) != 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(argv_p[0], argv_p.data(), env_p.data());
    ::_exit(127);
  }
  // With its start time: a pid reused after the node ended is another process (issue 32:
  // status said "running" and destroy ended an unrelated session).
  if (std::optional<unsigned long long> start = start_time(pid))
    std::ofstream(rank_file(env_dir, rank, "start")) << *start << '\n';
  std::ofstream(rank_file(env_dir, rank, "pid")) << pid << '\n';
  return pid;
}

NodeState node_state(const std::string& env_dir, int rank) {
  NodeState state;
  state.pid = read_int(rank_file(env_dir, rank, "pid")).value_or(0);
  state.exit_code = read_int(rank_file(env_dir, rank, "exit"));
  std::optional<std::string> start = read_whole(rank_file(env_dir, rank, "start"));
  std::string record = std::to_string(state.pid);
  if (start && !start->empty() && (*start)[0] != '\n')
    record += ":" + start->substr(0, start->find('\n'));
  state.running = state.pid > 0 && recorded_session(record).has_value();
  return state;
}

std::vector<int> session_processes(int sid) {
  std::vector<int> pids;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    if (session_of(pid) == sid) pids.push_back(pid);
  }
  return pids;
}

bool stop_sessions(const std::vector<int>& sids, int grace_seconds) {
  auto live = [&sids] {
    std::vector<int> pids;
    for (int sid : sids) {
      for (int pid : session_processes(sid)) pids.push_back(pid);
    }
    return pids;
  };
  // mlenv-boot stops its workers on SIGTERM within its grace; a process that ignores it, or
  // one that outlives mlenv-boot, is killed when the grace is over.
  for (int signal : {SIGTERM, SIGKILL}) {
    for (int pid : live()) ::kill(pid, signal);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::seconds(signal == SIGTERM ? grace_seconds : 5);
    while (!live().empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (live().empty()) return true;
  }
  return false;
}

std::optional<std::vector<std::string>> node_environment(int sid) {
  for (int pid : session_processes(sid)) {
    std::optional<std::string> environ_text =
        read_whole("/proc/" + std::to_string(pid) + "/environ");
    if (!environ_text) continue;
    std::vector<std::string> env;
    bool has_rank = false;
    std::size_t start = 0;
    for (std::size_t end; (end = environ_text->find('\0', start)) != std::string::npos;
         start = end + 1) {
      env.push_back(environ_text->substr(start, end - start));
      has_rank = has_rank || env.back().starts_with("RANK=");
    }
    if (has_rank) return env;
  }
  return std::nullopt;
}

}  // namespace mlenv::target::local
