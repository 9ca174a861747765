#include "supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <thread>

#include "exit_code.h"
#include "log.h"
#include "signals.h"
#include "util.h"

namespace boot {
namespace {

struct Child {
  std::string name;
  pid_t pid = -1;
  bool worker = false;
  bool running = false;
};

// fork+exec with everything prepared before the fork, so the child only calls
// async-signal-safe functions.
pid_t spawn(const ChildSpec& spec) {
  std::vector<std::string> env_strings = to_envp(spec.env);
  std::vector<char*> argv, envp;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const std::string& entry : env_strings) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  // PATH lookup follows the child's own PATH, as a shell would.
  std::string path_value;
  if (auto path = spec.env.find("PATH"); path != spec.env.end()) path_value = path->second;
  std::vector<std::string> candidates;
  if (spec.argv[0].find('/') != std::string::npos) {
    candidates.push_back(spec.argv[0]);
  } else {
    size_t start = 0;
    if (path_value.empty()) path_value = "/usr/local/bin:/usr/bin:/bin";
    for (;;) {
      size_t colon = path_value.find(':', start);
      std::string dir = path_value.substr(start, colon - start);
      candidates.push_back((dir.empty() ? "." : dir) + "/" + spec.argv[0]);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid != 0) return pid;

  ::setpgid(0, 0);
  // If mlenv-boot is killed outright, its workers must not train on alone.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(128 + SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int signal : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(signal, SIG_DFL);
  int error = ENOENT;
  for (const std::string& candidate : candidates) {
    ::execve(candidate.c_str(), argv.data(), envp.data());
    if (errno != ENOENT) error = errno;
  }
  const char* message = error == ENOENT ? "mlenv-boot: error: command not found\n"
                                        : "mlenv-boot: error: cannot execute the command\n";
  ssize_t ignored = ::write(STDERR_FILENO, message, std::strlen(message));
  (void)ignored;
  ::_exit(error == ENOENT ? 127 : 126);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// This process's children as the kernel lists them (/proc/self/task/*/children): orphans it
// adopted as a subreaper among them.
std::vector<pid_t> current_children() {
  std::vector<pid_t> pids;
  DIR* tasks = ::opendir("/proc/self/task");
  if (!tasks) return pids;
  while (dirent* task = ::readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    std::string path = std::string("/proc/self/task/") + task->d_name + "/children";
    for (const std::string& pid : split(read_file(path).value_or(""), ' ')) {
      if (!pid.empty() && pid.find_first_not_of("0123456789\n") == std::string::npos)
        pids.push_back(static_cast<pid_t>(std::stol(pid)));
    }
  }
  ::closedir(tasks);
  return pids;
}

// What a worker daemonized (`setsid ... &`) was adopted by this subreaper and would outlive the
// job where nothing else reaps it (a host, Slurm without cgroup tracking): it is killed and
// reaped once the workers are done, its own orphans with it, for at most about a second.
void end_adopted_children() {
  for (int round = 0; round < 50; ++round) {
    std::vector<pid_t> pids = current_children();
    if (pids.empty()) return;
    if (round == 0) {
      log_info("ending " + std::to_string(pids.size()) + " processes the workers left behind");
    }
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
}

class Supervisor {
 public:
  Supervisor(const LaunchSpec& spec, ControlLink& link) : spec_(spec), link_(link) {}

  int run() {
    // As PID 1 orphans are ours anyway; elsewhere this makes them ours, so they are reaped.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    for (const ChildSpec& service : spec_.services) start(service, false);
    for (const ChildSpec& worker : spec_.workers) start(worker, true);
    if (spec_.workers.empty() && !spec_.services.empty()) {
      log_info("no command: running the services only");
    } else if (spec_.workers.empty()) {
      // A dev env's other nodes: staying up keeps rank 0's rendezvous links and the pods alive.
      log_info("no command and no services on this node: idle until told to stop");
    }

    for (;;) {
      reap();
      if (!stopping_ && running(true) == 0 && !spec_.workers.empty() && !done_reported_) {
        log_info("every worker on this node succeeded; waiting for the other nodes");
        link_.report_done();
        done_reported_ = true;
      }
      if (stopping_ && running(true) == 0 && !services_stopping_) {
        services_stopping_ = true;
        signal_all(false, SIGTERM);
        kill_at_ = Clock::now() + grace();
      }
      if (services_stopping_ && running(false) == 0) return final_code_;
      if (spec_.workers.empty() && !spec_.services.empty() && running(false) == 0 && !stopping_) {
        log_info("every service exited");
        return final_code_;
      }
      if (stopping_ && !killed_ && Clock::now() >= kill_at_) {
        log_warning("children still running after the grace period; sending SIGKILL");
        signal_all(true, SIGKILL);
        signal_all(false, SIGKILL);
        killed_ = true;
      }
      wait_for_events();
    }
  }

 private:
  Clock::duration grace() const {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(spec_.grace_s));
  }

  void start(const ChildSpec& spec, bool worker) {
    pid_t pid = spawn(spec);
    if (pid < 0) {
      log_error("cannot start " + spec.name + ": " + std::strerror(errno));
      begin_stop(kExitSystemError, "cannot start " + spec.name, true);
      return;
    }
    // Also set here: the parent may signal the group before the child ran setpgid itself.
    ::setpgid(pid, pid);
    children_.push_back({spec.name, pid, worker, true});
  }

  size_t running(bool workers) const {
    return static_cast<size_t>(
        std::count_if(children_.begin(), children_.end(),
                      [&](const Child& c) { return c.running && c.worker == workers; }));
  }

  void signal_all(bool workers, int signal) {
    for (const Child& child : children_) {
      if (child.running && child.worker == workers) ::kill(-child.pid, signal);
    }
  }

  // Stops every worker (SIGTERM now, SIGKILL after the grace period) and keeps the first code;
  // the other nodes are told `peer_code` (by default the same).
  void begin_stop(int code, const std::string& why, bool tell_peers, int peer_code = -1) {
    if (stopping_) return;
    stopping_ = true;
    final_code_ = code;
    log_info("stopping: " + why);
    if (tell_peers) link_.report_failure(peer_code < 0 ? code : peer_code, why);
    signal_all(true, SIGTERM);
    kill_at_ = Clock::now() + grace();
  }

  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      auto child = std::find_if(children_.begin(), children_.end(),
                                [&](const Child& c) { return c.pid == pid; });
      if (child == children_.end()) continue;  // an orphan we adopted: reaping it is all
      child->running = false;
      int code = exit_code_of(status);
      if (!child->worker) {
        if (stopping_) continue;
        log_error(child->name + " exited with code " + std::to_string(code) +
                  "; the job goes on without it");
        if (spec_.service_exited) spec_.service_exited(child->name, code);
        continue;
      }
      if (code != 0 && !stopping_) {
        log_error(child->name + " exited with code " + std::to_string(code));
        begin_stop(code, child->name + " exited with code " + std::to_string(code), true);
      }
    }
  }

  void wait_for_events() {
    std::vector<pollfd> fds = {{signal_fd(), POLLIN, 0}};
    // Once stopping, news from other nodes changes nothing; unread news must not wake the loop.
    if (!stopping_) link_.add_pollfds(fds);
    Clock::time_point wake = std::min(link_.next_wakeup(), Clock::now() + std::chrono::seconds(1));
    if (stopping_ && !killed_) wake = std::min(wake, kill_at_);
    ::poll(fds.data(), fds.size(), poll_timeout_ms(wake));
    for (int signal : take_signals()) {
      if (!is_termination(signal)) continue;
      if (!stopping_) {
        std::string name = strsignal(signal);
        // A node told to stop (an eviction, a preemption, a drained node) is taken from the
        // others: they exit kExitPeerLost, which the pod failure policy does not count
        // against `restarts` (targets/kube/workload.cc); this node exits 128 + signal.
        begin_stop(128 + signal, "received " + name, true, kExitPeerLost);
        signal_all(false, signal);
      } else {
        // A second signal: pass it on, as torchrun does.
        signal_all(true, signal);
      }
    }
    if (stopping_) return;
    ControlEvent event = link_.service();
    if (event.kind == ControlEvent::kAbort) {
      // Another node failed, or was taken away: only the node whose own command failed exits
      // with its code, so a run's failure counts once against `restarts` however the news
      // reached the others (a report, or a connection that dropped first); the others exit
      // kExitPeerLost, which the pod failure policy ignores (platforms/kube/workload.cc).
      log_error(event.why);
      begin_stop(kExitPeerLost, event.why, false);
    } else if (event.kind == ControlEvent::kFinish) {
      log_info("every node finished");
      stopping_ = true;
      final_code_ = 0;
      kill_at_ = Clock::now() + grace();
    }
  }

  const LaunchSpec& spec_;
  ControlLink& link_;
  std::vector<Child> children_;
  bool stopping_ = false;
  bool services_stopping_ = false;
  bool killed_ = false;
  bool done_reported_ = false;
  int final_code_ = 0;
  Clock::time_point kill_at_;
};

}  // namespace

int supervise(const LaunchSpec& spec, ControlLink& link) {
  int code = Supervisor(spec, link).run();
  end_adopted_children();
  return code;
}

}  // namespace boot
