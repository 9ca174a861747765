#include "signals.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string>

#include "exit_code.h"

namespace boot {
namespace {

int pipe_fds[2] = {-1, -1};

void on_signal(int signal) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(signal);
  ssize_t ignored = ::write(pipe_fds[1], &byte, 1);
  (void)ignored;
  errno = saved;
}

}  // namespace

void install_signal_handlers() {
  if (pipe_fds[0] >= 0) return;
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw BootError(kExitSystemError, "cannot create the signal pipe");
  }
  struct sigaction action = {};
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT})
    sigaction(signal, &action, nullptr);
  // A peer that vanishes must show up as a send error, not kill mlenv-boot.
  ::signal(SIGPIPE, SIG_IGN);
}

int signal_fd() {
  return pipe_fds[0];
}

std::vector<int> take_signals() {
  std::vector<int> signals;
  unsigned char buffer[64];
  for (;;) {
    ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    signals.insert(signals.end(), buffer, buffer + n);
  }
  return signals;
}

bool is_termination(int signal) {
  return signal != SIGCHLD;
}

void throw_if_terminated() {
  if (pipe_fds[0] < 0) return;
  for (int signal : take_signals()) {
    if (is_termination(signal)) {
      throw BootError(128 + signal,
                      "stopped by signal " + std::to_string(signal) + " before launching");
    }
  }
}

int poll_timeout_ms(Clock::time_point until, int cap_ms) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  // Round up so a loop does not spin on a deadline a fraction of a millisecond away.
  return static_cast<int>(std::clamp<long long>(left + 1, 0, cap_ms));
}

void sleep_until(Clock::time_point until) {
  while (Clock::now() < until) {
    pollfd entry{signal_fd(), POLLIN, 0};
    int ready = ::poll(&entry, pipe_fds[0] >= 0 ? 1 : 0, poll_timeout_ms(until));
    if (ready > 0) throw_if_terminated();
  }
}

}  // namespace boot
