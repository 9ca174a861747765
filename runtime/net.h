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

/// A connection exchanging one compact JSON document per line; non-blocking underneath.
class LineConnection {
 public:
  explicit LineConnection(Fd fd);

  int fd() const { return fd_.get(); }
  /// Sends one message, waiting at most a few seconds for buffer space; false when the peer is
  /// gone or stuck.
  bool send(const Json& message);
  /// Reads what has arrived, appending complete messages; false on EOF, error, or a malformed or
  /// oversized line (a foreign client), after which the connection is dead.
  bool receive(std::vector<Json>& messages);

 private:
  Fd fd_;
  std::string buffer_;
};

}  // namespace boot
