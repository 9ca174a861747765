#pragma once
// TCP plumbing for discovery and the rendezvous: endpoints, listeners, and connections that carry
// one JSON message per line.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json.h"
#include "signals.h"

namespace boot {

/// An owned file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  /// Gives up ownership.
  int release();

 private:
  int fd_ = -1;
};

/// A host and port, as given by --rdzv HOST:PORT.
struct Endpoint {
  std::string host;
  int port = 0;
};

/// Parses HOST:PORT or [IPv6]:PORT.
std::optional<Endpoint> parse_endpoint(std::string_view text);

/// A non-blocking listening socket on every address, IPv6 and IPv4 alike where the host allows.
/// Throws BootError(kExitSystemError) when the port cannot be bound.
Fd listen_tcp(int port);

/// The numeric local address of a connected socket ("10.128.0.7").
std::string local_address(int fd);

/// The numeric peer address of a connected socket.
std::string peer_address(int fd);

/// The name of the interface that holds an address ("eth0"), or empty when none does.
std::string interface_of_address(const std::string& address);

/// Whether this host has an interface of that name.
bool has_interface(const std::string& name);

/// The longest line a member accepts from rank 0: the plan names every host, so it grows with the
/// job (65,536 nodes with 60-byte names is 4 MiB).
inline constexpr size_t kMaxPlanLine = size_t{4} << 20;

/// The longest line rank 0 accepts from a node: a join, a heartbeat or a failure report is well
/// under a kilobyte, so anything near this is a foreign or hostile client.
inline constexpr size_t kMaxMemberLine = size_t{64} << 10;

/// A connection exchanging one compact JSON document per line; non-blocking underneath.
class LineConnection {
 public:
  /// `max_line` bounds one line; the unfinished line held per connection never exceeds it.
  explicit LineConnection(Fd fd, size_t max_line = kMaxPlanLine);

  int fd() const { return fd_.get(); }
  /// Sends one message, waiting at most a few seconds for buffer space; false when the peer is
  /// gone or stuck.
  bool send(const Json& message);
  /// Reads what has arrived (at most a bounded amount per call: poll() reports the rest),
  /// appending complete messages; false on EOF, error, or a malformed or oversized line (a foreign
  /// client), after which the connection is dead.
  bool receive(std::vector<Json>& messages);
  /// Why receive() returned false when the peer's bytes were at fault, one phrase for the log
  /// ("sent a line longer than 65536 bytes"); empty after an EOF or a reset.
  const std::string& failure() const { return failure_; }
  /// Bytes of an unfinished line held now, for tests of the bound.
  size_t buffered() const { return buffer_.size(); }

 private:
  /// Adds received bytes to the unfinished line, parsing each completed one; false on a bad line.
  bool take(std::string_view bytes, std::vector<Json>& messages);

  Fd fd_;
  size_t max_line_;
  std::string buffer_;
  bool dead_ = false;
  std::string failure_;
};

}  // namespace boot
