#pragma once
// Phase 2, discovery: reach rank 0's rendezvous endpoint. Headless-service DNS can lag pod start by
// tens of seconds, and a name that resolves may still refuse connections, so both are retried.

#include <functional>
#include <string>
#include <vector>

#include <sys/socket.h>

#include "net.h"

namespace boot {

/// One resolved socket address.
struct ResolvedAddress {
  sockaddr_storage address = {};
  socklen_t length = 0;
};

/// Turns a host and port into addresses; on failure returns none and sets `error`. Injectable so
/// tests can simulate DNS that is late.
using Resolver = std::function<std::vector<ResolvedAddress>(const Endpoint&, std::string& error)>;

/// getaddrinfo, TCP only.
std::vector<ResolvedAddress> system_resolver(const Endpoint& endpoint, std::string& error);

/// How long to wait between attempts: DNS failures back off 0.5 s doubling to 5 s as
/// kube-dns needs; refused connects retry fast (10 ms doubling to 250 ms) because a starting
/// rank 0 is usually a moment away.
struct Backoff {
  double dns_first_s = 0.5;
  double dns_max_s = 5;
  double connect_first_s = 0.01;
  double connect_max_s = 0.25;
};

/// Connects to the endpoint, retrying resolution and connection until the deadline. Throws
/// BootError(kExitRendezvousTimeout) naming the last error when the deadline passes.
Fd connect_with_retry(const Endpoint& endpoint, Clock::time_point deadline,
                      const Resolver& resolver = system_resolver, const Backoff& backoff = {});

}  // namespace boot
