#include "compiler/apply/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "compiler/base/shell.h"

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

// Stops the child: SIGTERM, then SIGKILL if it is still there 200 ms later.
int stop(pid_t pid) {
  int status = 0;
  kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (waitpid(pid, &status, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  return status;
}

// Milliseconds left before `deadline`, for poll(); -1 when there is none.
int remaining_ms(const std::optional<Clock::time_point>& deadline) {
  if (!deadline) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 100));
}

}  // namespace

RunResult run_command(const std::vector<std::string>& argv, const std::string& input,
                      int timeout_seconds, bool capture) {
  RunResult result;
  int stdin_fd = input_fd(input);
  int out_fds[2] = {-1, -1};
  if (stdin_fd < 0 || (capture && pipe2(out_fds, O_CLOEXEC) != 0)) {
    if (stdin_fd >= 0) close(stdin_fd);
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
    dup2(stdin_fd, STDIN_FILENO);
    if (capture) dup2(out_fds[1], STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(stdin_fd);
  if (capture) close(out_fds[1]);
  if (pid < 0) {
    if (capture) close(out_fds[0]);
    result.not_started = true;
    return result;
  }
  std::optional<Clock::time_point> deadline;
  if (timeout_seconds > 0) deadline = Clock::now() + std::chrono::seconds(timeout_seconds);
  int status = 0;
  bool reading = capture;
  for (;;) {
    if (reading) {
      // Read stdout until EOF; a grandchild may keep it open after the child exits, so the
      // child's exit is also checked on every wake-up.
      pollfd fd{out_fds[0], POLLIN, 0};
      if (poll(&fd, 1, deadline ? remaining_ms(deadline) : 100) > 0) {
        char buffer[4096];
        ssize_t n = read(out_fds[0], buffer, sizeof buffer);
        if (n > 0) {
          result.output.append(buffer, static_cast<std::size_t>(n));
          continue;
        }
        reading = false;
      }
    }
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) {
      result.not_started = true;
      break;
    }
    if (deadline && Clock::now() >= *deadline) {
      status = stop(pid);
      result.timed_out = true;
      break;
    }
    if (!reading) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (capture) {
    // Whatever the child wrote before it exited is still in the pipe.
    fcntl(out_fds[0], F_SETFL, O_NONBLOCK);
    char buffer[4096];
    for (ssize_t n; (n = read(out_fds[0], buffer, sizeof buffer)) > 0;)
      result.output.append(buffer, static_cast<std::size_t>(n));
    close(out_fds[0]);
  }
  if (result.timed_out) {
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
    bool plain = !arg.empty();
    for (char c : arg) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) ||
            std::string_view("-_./=:,@%+").find(c) != std::string_view::npos)) {
        plain = false;
      }
    }
    if (plain) {
      out += arg;
      continue;
    }
    out += shell_quote(arg);
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
  if (text.empty()) return std::nullopt;
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    std::int64_t value = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      value = value * 10 + (text[i] - '0');
      if (value > kMaxDurationSeconds) return std::nullopt;
    }
    if (i == start || i == text.size()) return std::nullopt;
    char unit = text[i++];
    std::int64_t scale = unit == 'h' ? 3600 : unit == 'm' ? 60 : unit == 's' ? 1 : 0;
    if (scale == 0) return std::nullopt;
    total += value * scale;
    if (total > kMaxDurationSeconds) return std::nullopt;
  }
  if (total == 0) return std::nullopt;
  return static_cast<int>(total);
}

}  // namespace mlenv::plan
