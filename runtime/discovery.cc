#include "discovery.h"

#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "exit_code.h"
#include "log.h"

namespace boot {

std::vector<ResolvedAddress> system_resolver(const Endpoint& endpoint, std::string& error) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  std::string port = std::to_string(endpoint.port);
  int status = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &list);
  std::vector<ResolvedAddress> out;
  if (status != 0) {
    error = "cannot resolve " + endpoint.host + ": " + ::gai_strerror(status);
    return out;
  }
  for (addrinfo* entry = list; entry; entry = entry->ai_next) {
    ResolvedAddress address;
    std::memcpy(&address.address, entry->ai_addr, entry->ai_addrlen);
    address.length = entry->ai_addrlen;
    out.push_back(address);
  }
  ::freeaddrinfo(list);
  return out;
}

namespace {

// One non-blocking connect bounded by the deadline; an invalid Fd and `error` set on failure.
Fd try_connect(const ResolvedAddress& address, Clock::time_point deadline, std::string& error) {
  Fd fd(::socket(address.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    error = std::string("socket: ") + std::strerror(errno);
    return Fd();
  }
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.address), address.length) ==
      0) {
    return fd;
  }
  if (errno != EINPROGRESS) {
    error = std::string("connect: ") + std::strerror(errno);
    return Fd();
  }
  pollfd entry{fd.get(), POLLOUT, 0};
  // A silently dropped SYN must not eat the whole deadline in one attempt.
  auto attempt_end = std::min(deadline, Clock::now() + std::chrono::seconds(3));
  while (::poll(&entry, 1, poll_timeout_ms(attempt_end)) == 0) {
    if (Clock::now() >= attempt_end) {
      error = "connect: timed out";
      return Fd();
    }
  }
  int status = 0;
  socklen_t length = sizeof status;
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &status, &length);
  if (status != 0) {
    error = std::string("connect: ") + std::strerror(status);
    return Fd();
  }
  return fd;
}

std::chrono::nanoseconds seconds(double value) {
  return std::chrono::nanoseconds(static_cast<long long>(value * 1e9));
}

}  // namespace

Fd connect_with_retry(const Endpoint& endpoint, Clock::time_point deadline,
                      const Resolver& resolver, const Backoff& backoff) {
  double dns_wait = backoff.dns_first_s;
  double connect_wait = backoff.connect_first_s;
  std::string last_error;
  std::string logged_error;
  auto started = Clock::now();
  for (;;) {
    throw_if_terminated();
    std::string error;
    std::vector<ResolvedAddress> addresses = resolver(endpoint, error);
    double wait = 0;
    if (addresses.empty()) {
      wait = dns_wait;
      dns_wait = std::min(dns_wait * 2, backoff.dns_max_s);
    } else {
      for (const ResolvedAddress& address : addresses) {
        Fd fd = try_connect(address, deadline, error);
        if (fd.valid()) return fd;
      }
      wait = connect_wait;
      connect_wait = std::min(connect_wait * 2, backoff.connect_max_s);
    }
    last_error = error;
    // Log each distinct error once, so a slow DNS shows in the log without flooding it.
    if (last_error != logged_error) {
      log_info("waiting for rank 0 at " + endpoint.host + ":" + std::to_string(endpoint.port) +
               ": " + last_error);
      logged_error = last_error;
    }
    auto next = Clock::now() + seconds(wait);
    if (next >= deadline) {
      sleep_until(deadline);
      double waited = std::chrono::duration<double>(Clock::now() - started).count();
      throw BootError(kExitRendezvousTimeout,
                      "rendezvous timeout: rank 0 at " + endpoint.host + ":" +
                          std::to_string(endpoint.port) + " unreachable after " +
                          std::to_string(static_cast<int>(waited)) + " s (" + last_error + ")");
    }
    sleep_until(next);
  }
}

}  // namespace boot
