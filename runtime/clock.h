#pragma once
// The clock of every deadline, and the one way configured seconds become clock durations.

#include <chrono>

namespace boot {

/// The clock of every deadline: monotonic, so a clock step cannot shorten a timeout.
using Clock = std::chrono::steady_clock;

/// Seconds as a clock duration, saturating: zero for NaN and values <= 0, the clock's largest
/// duration beyond its range. A plain duration_cast of 1e10 s to int64 nanoseconds overflows
/// (undefined behaviour; in practice a negative duration and an immediate timeout).
inline Clock::duration clock_duration(double seconds) {
  if (!(seconds > 0)) return Clock::duration::zero();
  double ticks = seconds * Clock::period::den / Clock::period::num;
  // 9e18 is below INT64_MAX (9.22e18) with room for the rounding of a double.
  if (!(ticks < 9.0e18)) return Clock::duration::max();
  return Clock::duration(static_cast<Clock::rep>(ticks));
}

/// `start` plus `seconds`, saturating at the clock's last time point rather than wrapping.
inline Clock::time_point time_after(Clock::time_point start, double seconds) {
  Clock::duration span = clock_duration(seconds);
  if (span >= Clock::time_point::max() - start) return Clock::time_point::max();
  return start + span;
}

}  // namespace boot
