#include "compiler/day2/line_stream.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

namespace mlenv::plan::day2 {
namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  pid_t pid = -1;
  int fd = -1;          ///< read end of its stdout; -1 once at end of file
  std::string pending;  ///< the start of a line not complete yet
  int status = 127;
};

Child spawn(const std::vector<std::string>& argv) {
  Child child;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return child;
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  child.pid = fork();
  if (child.pid == 0) {
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  if (child.pid < 0) {
    close(fds[0]);
    return child;
  }
  child.fd = fds[0];
  return child;
}

// Writes the complete lines of `child.pending` (all of it at end of file), prefixed.
void flush_lines(Child& child, const std::string& prefix, std::ostream& out, bool at_end) {
  std::size_t start = 0;
  for (;;) {
    std::size_t end = child.pending.find('\n', start);
    // A line over kMaxLine is cut, whether its end is already read or not.
    if (child.pending.size() - start >= kMaxLine &&
        (end == std::string::npos || end - start > kMaxLine))
      end = start + kMaxLine;
    if (end == std::string::npos) break;
    out << prefix;
    out.write(child.pending.data() + start, static_cast<std::streamsize>(end - start));
    out << '\n';
    start = end < child.pending.size() && child.pending[end] == '\n' ? end + 1 : end;
  }
  child.pending.erase(0, start);
  if (at_end && !child.pending.empty()) {
    out << prefix << child.pending << '\n';
    child.pending.clear();
  }
  out.flush();
}

// Reads what is there from each child with output; false when none has any left.
bool read_some(std::vector<Child>& children, const std::vector<LineSource>& sources,
               std::ostream& out, int wait_ms) {
  std::vector<pollfd> fds;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (children[i].fd < 0) continue;
    fds.push_back({children[i].fd, POLLIN, 0});
    which.push_back(i);
  }
  if (fds.empty()) return false;
  if (poll(fds.data(), fds.size(), wait_ms) <= 0) return true;
  for (std::size_t k = 0; k < fds.size(); ++k) {
    if (fds[k].revents == 0) continue;
    Child& child = children[which[k]];
    char buffer[16384];
    ssize_t n = read(child.fd, buffer, sizeof buffer);
    if (n > 0) {
      child.pending.append(buffer, static_cast<std::size_t>(n));
      flush_lines(child, sources[which[k]].prefix, out, false);
    } else if (n == 0 || errno != EINTR) {
      close(child.fd);
      child.fd = -1;
      flush_lines(child, sources[which[k]].prefix, out, true);
    }
  }
  return true;
}

int exit_status(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

std::vector<int> stream_lines(const std::vector<LineSource>& sources, std::ostream& out,
                              int timeout_seconds) {
  std::vector<Child> children;
  for (const LineSource& source : sources) children.push_back(spawn(source.argv));
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_seconds);
  bool late = false;
  while (read_some(children, sources, out, 100)) {
    if (timeout_seconds > 0 && Clock::now() >= deadline) {
      late = true;
      break;
    }
  }
  std::vector<int> statuses;
  for (std::size_t i = 0; i < children.size(); ++i) {
    Child& child = children[i];
    if (child.fd >= 0) {
      kill(child.pid, SIGTERM);
      close(child.fd);
      flush_lines(child, sources[i].prefix, out, true);
    }
    int status = 0;
    if (child.pid > 0 && waitpid(child.pid, &status, 0) == child.pid)
      child.status = exit_status(status);
    statuses.push_back(late && child.status == 128 + SIGTERM ? 124 : child.status);
  }
  return statuses;
}

}  // namespace mlenv::plan::day2
