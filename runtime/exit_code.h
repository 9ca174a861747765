#pragma once
// The exit codes of mlenv-boot and the error that carries one to main. A pod's exit code is what
// Kubernetes, JobSet failure policies and people see first, so every failure class has its own.

#include <stdexcept>
#include <string>

namespace boot {

/// Exit codes; a worker's own code is passed through unchanged, so these sit above the usual
/// small codes of programs and below 128 (death by signal). The exception is 1, an acceptance
/// run's "failed" verdict, which the compiler/runtime contract fixes.
enum ExitCode : int {
  kExitOk = 0,
  kExitNcclCheckFailed = 1,  ///< --nccl-check ran and failed: below min_busbw_gbps, or wrong values
  kExitTransport = 73,       ///< transport "rdma" is required and a node cannot use RDMA
  kExitNcclCheckError = 74,  ///< --nccl-check could not run: NCCL or CUDA error, no GPU, deadline
  kExitRendezvousTimeout = 75,  ///< rank 0 unreachable, or not every node joined by the deadline
  kExitPeerLost = 76,           ///< a node vanished or missed heartbeats after the rendezvous
  kExitConfigError = 78,        ///< bad flags, bad boot.json, or rejected by rank 0
  kExitSystemError = 71,        ///< a system call failed (fork, socket, ...)
};

/// A failure that ends mlenv-boot with a code and one line for stderr.
class BootError : public std::runtime_error {
 public:
  BootError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  /// An ExitCode, or 128+signal when a termination signal ended a wait.
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace boot
