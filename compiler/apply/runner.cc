#include "compiler/apply/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "compiler/base/duration.h"
#include "compiler/base/shell.h"
#include "compiler/diag/render.h"

namespace mlenv::plan {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kPipeInput = 4096;  // PIPE_BUF: always fits a pipe without a reader

// A readable descriptor holding `input`, or -1.
int input_fd(const std::string& input) {
  if (input.size() <= kPipeInput) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    ssize_t written = input.empty() ? 0 : write(fds[1], input.data(), input.size());
    close(fds[1]);
    if (written != static_cast<ssize_t>(input.size())) {
      close(fds[0]);
      return -1;
    }
    return fds[0];
  }
  std::FILE* file = std::tmpfile();
  if (file == nullptr) return -1;
  std::fwrite(input.data(), 1, input.size(), file);
  std::fflush(file);
  int fd = dup(fileno(file));
  std::fclose(file);
  if (fd >= 0) lseek(fd, 0, SEEK_SET);
  return fd;
}

// Stops the child and everything it started (its own process group): SIGTERM, then SIGKILL
// if it is still there 200 ms later.
int stop(pid_t pid) {
  int status = 0;
  kill(-pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (waitpid(pid, &status, WNOHANG) == 0) {
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  return status;
}

// Milliseconds left before `deadline`, at most 100 so the child's exit is noticed; 100 when
// there is none.
int wait_ms(const std::optional<Clock::time_point>& deadline) {
  if (!deadline) return 100;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 100));
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own stdout closed: nothing left to show it to
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The child's stdout and stderr as they arrive: stdout kept (up to kMaxCapturedOutput) when
// captured, else shown on ours; stderr always shown on ours. Shown bytes are escaped, so a
// client (or what it relays from the cluster) cannot send the terminal control sequences.
struct ChildOutput {
  int out = -1;
  int err = -1;
  bool capture = false;
  RunResult* result = nullptr;

  // Reads what one descriptor has; false at its end (then it is closed).
  bool read_from(int& fd, bool is_stdout) {
    char buffer[65536];
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) {
      close(fd);
      fd = -1;
      return false;
    }
    std::string_view chunk(buffer, static_cast<std::size_t>(n));
    if (is_stdout && capture) {
      if (result->output.size() + chunk.size() > kMaxCapturedOutput) {
        result->overflowed = true;
        return true;
      }
      result->output.append(chunk);
    } else {
      write_all(is_stdout ? STDOUT_FILENO : STDERR_FILENO, printable(chunk, true));
    }
    return true;
  }

  // Waits up to `ms` for output and reads it; true when something was read.
  bool pump(int ms) {
    pollfd fds[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
    if (poll(fds, 2, ms) <= 0) return false;
    bool any = false;
    if (fds[0].revents != 0) any = read_from(out, true) || any;
    if (fds[1].revents != 0) any = read_from(err, false) || any;
    return any;
  }

  // What the child left in the pipes when it exited; a grandchild that keeps them open cannot
  // hold the parent, since the descriptors are read without blocking.
  void drain() {
    for (int* fd : {&out, &err}) {
      if (*fd < 0) continue;
      fcntl(*fd, F_SETFL, O_NONBLOCK);
      while (*fd >= 0 && read_from(*fd, fd == &out) && !result->overflowed) {
        pollfd one{*fd, POLLIN, 0};
        if (poll(&one, 1, 0) <= 0) break;
      }
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }
};

}  // namespace

RunResult run_command(const std::vector<std::string>& argv, const std::string& input,
                      int timeout_seconds, bool capture) {
  RunResult result;
  int stdin_fd = input_fd(input);
  int out_fds[2] = {-1, -1};
  int err_fds[2] = {-1, -1};
  if (stdin_fd < 0 || pipe2(out_fds, O_CLOEXEC) != 0 || pipe2(err_fds, O_CLOEXEC) != 0) {
    for (int fd : {stdin_fd, out_fds[0], out_fds[1], err_fds[0], err_fds[1]}) {
      if (fd >= 0) close(fd);
    }
    result.not_started = true;
    return result;
  }
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    // Its own process group, so the deadline ends whatever it started too; and it dies with
    // mlenvc rather than run on unattended.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(stdin_fd, STDIN_FILENO);
    dup2(out_fds[1], STDOUT_FILENO);
    dup2(err_fds[1], STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  if (pid > 0) setpgid(pid, pid);  // also here, so stop() finds the group whoever runs first
  close(stdin_fd);
  close(out_fds[1]);
  close(err_fds[1]);
  ChildOutput output{out_fds[0], err_fds[0], capture, &result};
  if (pid < 0) {
    output.drain();
    result.not_started = true;
    return result;
  }
  std::optional<Clock::time_point> deadline;
  if (timeout_seconds > 0) deadline = Clock::now() + std::chrono::seconds(timeout_seconds);
  int status = 0;
  for (;;) {
    // The deadline is checked after every read, so a client that never stops printing
    // cannot keep the loop reading past it.
    bool open = output.out >= 0 || output.err >= 0;
    if (open) output.pump(wait_ms(deadline));
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) {
      result.not_started = true;
      break;
    }
    if (result.overflowed || (deadline && Clock::now() >= *deadline)) {
      status = stop(pid);
      result.timed_out = !result.overflowed;
      break;
    }
    if (!open) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  output.drain();
  kill(-pid, SIGKILL);  // what the client left running in its group ends with it
  if (result.overflowed) result.output.clear();
  if (result.timed_out || result.overflowed) {
    result.status = 124;
    return result;
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.not_started = result.not_started || (WIFEXITED(status) && WEXITSTATUS(status) == 127);
  return result;
}

std::string shell_words(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    out += shell_word(arg);
  }
  return out;
}

std::optional<std::string> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::string_view rest(path);
  while (true) {
    std::size_t colon = rest.find(':');
    std::string_view entry = rest.substr(0, colon);
    std::string dir(entry.empty() ? std::string_view(".") : entry);
    std::string candidate = dir;
    candidate += '/';
    candidate.append(name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

std::optional<int> parse_duration(const std::string& text) {
  std::optional<std::int64_t> ms = parse_duration_ms(text);
  if (!ms || *ms == 0 || *ms % 1000 != 0 || *ms / 1000 > kMaxDurationSeconds) return std::nullopt;
  return static_cast<int>(*ms / 1000);
}

}  // namespace mlenv::plan
