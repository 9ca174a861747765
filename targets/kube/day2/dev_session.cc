// `mlenvc dev-session`: port-forward to debugpy and sync --watch in one command, as the seeds'
// `make dev-session` did.

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <cerrno>

#include "compiler/apply/runner.h"
#include "compiler/day2/commands.h"
#include "compiler/diag/render.h"
#include "targets/kube/day2/driver.h"
#include "targets/kube/day2/sync_forward.h"

namespace mlenv::plan::day2 {
namespace {

volatile sig_atomic_t g_stop_requested = 0;

void request_stop(int) {
  g_stop_requested = 1;
}

// SIGINT (Ctrl-C) and SIGTERM end the session after the current sync instead of killing
// mlenvc, so it can stop the forward; the previous handlers come back at the end. SA_RESTART
// keeps the client calls' reads going; their children get the default handlers back at exec.
class StopSignals {
 public:
  StopSignals() {
    g_stop_requested = 0;
    struct sigaction stop {};
    stop.sa_handler = request_stop;
    stop.sa_flags = SA_RESTART;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, &old_int_);
    sigaction(SIGTERM, &stop, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  bool requested() const { return g_stop_requested != 0; }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// The port-forward, running beside the sync: its stdin is /dev/null (the terminal stays the
// user's), its output the user's. It never outlives the session: stopped with SIGTERM and
// waited for at the end, and killed by the kernel should mlenvc die first (PR_SET_PDEATHSIG).
class BackgroundChild {
 public:
  explicit BackgroundChild(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    const pid_t parent = getpid();
    std::fflush(stdout);
    std::fflush(stderr);
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(127);  // mlenvc is already gone
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      const int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, STDIN_FILENO);
      execv(args[0], args.data());
      _exit(127);
    }
    if (pid_ < 0) status_ = 127;
  }
  ~BackgroundChild() { stop(); }
  BackgroundChild(const BackgroundChild&) = delete;
  BackgroundChild& operator=(const BackgroundChild&) = delete;

  /// Whether it still runs; when it ended, it is reaped and status() is its exit status.
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == 0 || (done < 0 && errno == EINTR)) return true;
    reaped(status);
    return false;
  }
  /// SIGTERM, then waits for it to end.
  void stop() {
    if (!running()) return;
    kill(pid_, SIGTERM);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped(status);
  }
  int status() const { return status_; }

 private:
  void reaped(int status) {
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
  }

  pid_t pid_ = -1;
  int status_ = 0;
};

// Syncs and watches until a stop is asked for or the forward ends; the exit status.
int watch_while_forwarding(const Session& session, const DevSessionRequest& request,
                           BackgroundChild& forward, std::ostream& out, Diagnostics& diagnostics) {
  StopSignals signals;
  bool forward_ended = false;
  SyncRequest sync;
  sync.target = request.target;
  sync.dir = request.dir;
  sync.watch = true;
  sync.poll_ms = request.poll_ms;
  sync.keep_watching = [&] {
    // Ctrl-C reaches the forward too (one process group): a stop asked for comes first.
    if (signals.requested() || !request.keep_watching()) return false;
    forward_ended = !forward.running();
    return !forward_ended;
  };
  int status = sync_with(session, sync, out, diagnostics);
  forward.stop();
  if (forward_ended) {
    out << "The port-forward ended (exit status " << forward.status()
        << "): the dev session stops\n";
    return 1;
  }
  out << "Dev session of " << session.env().unit << " stopped\n";
  return status;
}

}  // namespace

int KubeDay2Driver::dev_session(AppliedEnv env, const DevSessionRequest& request, std::ostream& out,
                                Diagnostics& diagnostics) const {
  std::optional<Session> session = Session::of(std::move(env), request.target, diagnostics);
  if (!session) return 1;
  std::optional<int> port = forwarded_port(*session, "debugpy", diagnostics);
  if (!port) return 1;
  std::optional<std::vector<std::string>> argv =
      forward_argv(*session, *port, request.local_port, diagnostics);
  if (!argv) return 1;
  out << "Forwarding localhost:" << (request.local_port > 0 ? request.local_port : *port)
      << " to debugpy in rank 0's pod: $ " << printable(shell_words(*argv)) << '\n';
  out.flush();
  BackgroundChild forward(*argv);
  return watch_while_forwarding(*session, request, forward, out, diagnostics);
}

}  // namespace mlenv::plan::day2
