#include "net.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "exit_code.h"
#include "util.h"

namespace boot {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

std::optional<Endpoint> parse_endpoint(std::string_view text) {
  Endpoint endpoint;
  size_t colon;
  if (text.starts_with('[')) {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return std::nullopt;
    }
    endpoint.host = std::string(text.substr(1, close - 1));
    colon = close + 1;
  } else {
    colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    endpoint.host = std::string(text.substr(0, colon));
  }
  std::optional<std::int64_t> port = parse_uint(text.substr(colon + 1));
  if (endpoint.host.empty() || !port || *port < 1 || *port > 65535) return std::nullopt;
  endpoint.port = static_cast<int>(*port);
  return endpoint;
}

Fd listen_tcp(int port) {
  // A dual-stack IPv6 socket accepts IPv4 too; fall back to IPv4 where IPv6 is disabled.
  Fd fd(::socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  int one = 1, zero = 0;
  if (fd.valid()) {
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    sockaddr_in6 address = {};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_any;
    address.sin6_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      if (errno == EADDRINUSE) {
        throw BootError(kExitSystemError,
                        "rendezvous port " + std::to_string(port) + " is already in use");
      }
      fd = Fd();
    }
  }
  if (!fd.valid()) {
    fd = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) throw BootError(kExitSystemError, "cannot create a socket");
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      throw BootError(kExitSystemError, "cannot bind the rendezvous port " + std::to_string(port) +
                                            ": " + std::strerror(errno));
    }
  }
  // The backlog must hold every node arriving at once (256 in the benchmark).
  if (::listen(fd.get(), 4096) != 0) {
    throw BootError(kExitSystemError, std::string("cannot listen: ") + std::strerror(errno));
  }
  return fd;
}

namespace {

std::string numeric_host(const sockaddr_storage& address, socklen_t length) {
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host, nullptr,
                    0, NI_NUMERICHOST) != 0) {
    return "";
  }
  std::string text = host;
  // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d; peers know themselves as a.b.c.d.
  if (text.starts_with("::ffff:") && text.find('.') != std::string::npos) text = text.substr(7);
  return text;
}

}  // namespace

std::string local_address(int fd) {
  sockaddr_storage address = {};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  return numeric_host(address, length);
}

std::string peer_address(int fd) {
  sockaddr_storage address = {};
  socklen_t length = sizeof address;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  return numeric_host(address, length);
}

std::string interface_of_address(const std::string& address) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* entry = list; entry; entry = entry->ifa_next) {
    if (!entry->ifa_addr) continue;
    int family = entry->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    socklen_t length = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    sockaddr_storage copy = {};
    std::memcpy(&copy, entry->ifa_addr, length);
    if (numeric_host(copy, length) == address) {
      found = entry->ifa_name;
      break;
    }
  }
  ::freeifaddrs(list);
  return found;
}

bool has_interface(const std::string& name) {
  return ::if_nametoindex(name.c_str()) != 0;
}

LineConnection::LineConnection(Fd fd, size_t max_line) : fd_(std::move(fd)), max_line_(max_line) {
  int one = 1;
  // Heartbeats and plans are small and latency matters more than batching.
  ::setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

bool LineConnection::send(const Json& message) {
  std::string line = message.dump() + "\n";
  size_t done = 0;
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (done < line.size()) {
    ssize_t n = ::send(fd_.get(), line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && Clock::now() < deadline) {
      pollfd entry{fd_.get(), POLLOUT, 0};
      ::poll(&entry, 1, poll_timeout_ms(deadline));
      continue;
    }
    return false;
  }
  return true;
}

bool LineConnection::receive(std::vector<Json>& messages) {
  if (dead_) return false;
  auto die = [&] {
    dead_ = true;
    buffer_ = std::string();
    return false;
  };
  // A peer that never pauses must not hold this loop (and rank 0's other connections) forever:
  // stop after a bounded amount; the descriptor stays readable, so poll() brings us back.
  constexpr size_t kReadPerCall = size_t{256} << 10;
  char chunk[16384];
  for (size_t read = 0; read < kReadPerCall;) {
    ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, 0);
    if (n > 0) {
      read += static_cast<size_t>(n);
      if (!take(std::string_view(chunk, static_cast<size_t>(n)), messages)) return die();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return die();  // EOF or a reset: the peer left, which is no protocol failure to report
  }
  return true;
}

bool LineConnection::take(std::string_view bytes, std::vector<Json>& messages) {
  for (;;) {
    size_t newline = bytes.find('\n');
    std::string_view piece = bytes.substr(0, newline);
    // Checked before anything is kept, so a line without an end costs at most the limit, not
    // everything the peer manages to send (issue #11 item 16).
    if (buffer_.size() + piece.size() > max_line_) {
      failure_ = "sent a line longer than " + std::to_string(max_line_) + " bytes";
      return false;
    }
    if (newline == std::string_view::npos) {
      buffer_.append(piece);
      return true;
    }
    std::string_view line = piece;
    if (!buffer_.empty()) {
      buffer_.append(piece);
      line = buffer_;
    }
    JsonParseResult parsed = parse_json(line);
    if (!parsed.value || !parsed.value->is_object()) {
      failure_ = "sent a line that is not a JSON object";
      return false;
    }
    messages.push_back(std::move(*parsed.value));
    buffer_.clear();
    bytes.remove_prefix(newline + 1);
  }
}

}  // namespace boot
