#pragma once
// Signals through a self-pipe, so every wait in mlenv-boot is one poll() that also wakes for
// SIGCHLD and termination. As PID 1 a signal without a handler is ignored, so handlers are needed.

#include <vector>

#include "clock.h"

namespace boot {

/// Installs handlers for SIGCHLD, SIGTERM, SIGINT, SIGHUP and SIGQUIT, and ignores SIGPIPE.
void install_signal_handlers();

/// The read end of the self-pipe, for poll().
int signal_fd();

/// The signals received since the last call, in order.
std::vector<int> take_signals();

/// Whether a signal asks mlenv-boot to stop (everything but SIGCHLD).
bool is_termination(int signal);

/// Drains the pipe and throws BootError(128+signal) when a termination signal arrived; used by the
/// phases before the supervisor, which have nothing to forward a signal to.
void throw_if_terminated();

/// Sleeps until a time point, waking early only to throw on a termination signal.
void sleep_until(Clock::time_point until);

/// Milliseconds from now until a time point, clamped to [0, cap], for poll().
int poll_timeout_ms(Clock::time_point until, int cap_ms = 1000);

}  // namespace boot
