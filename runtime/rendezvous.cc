#include "rendezvous.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "exit_code.h"
#include "log.h"

namespace boot {

Json join_to_json(const JoinRequest& request) {
  Json message = Json::object();
  message.set("t", "join")
      .set("v", kProtocolVersion)
      .set("job", request.job)
      .set("token", request.token)
      .set("nnodes", request.nnodes)
      .set("nproc_per_node", request.nproc_per_node)
      .set("report", report_to_json(request.report));
  return message;
}

std::optional<std::string> refuse_join(const JoinRequest& self, const Json& message,
                                       NodeReport& report) {
  const Json* type = message.find("t");
  if (!type || *type != Json("join")) return "expected a join message";
  const Json* version = message.find("v");
  if (!version || *version != Json(kProtocolVersion)) {
    return "protocol version differs (rank 0 speaks " + std::to_string(kProtocolVersion) + ")";
  }
  const Json* job = message.find("job");
  const Json* token = message.find("token");
  if (!job || *job != Json(self.job) || !token || *token != Json(self.token)) {
    return "foreign job: job name or job token differs from rank 0's (" + self.job + ")";
  }
  const Json* nnodes = message.find("nnodes");
  const Json* nproc = message.find("nproc_per_node");
  if (!nnodes || *nnodes != Json(self.nnodes) || !nproc || *nproc != Json(self.nproc_per_node)) {
    return "nnodes or nproc_per_node differs from rank 0's (" + std::to_string(self.nnodes) +
           " x " + std::to_string(self.nproc_per_node) + ")";
  }
  const Json* body = message.find("report");
  if (!body || !report_from_json(*body, report)) return "malformed node report";
  if (report.rank < 1 || report.rank >= self.nnodes) {
    return "node rank " + std::to_string(report.rank) + " is out of range for " +
           std::to_string(self.nnodes) + " nodes";
  }
  return std::nullopt;
}

PendingLimits pending_limits_for(int nnodes) {
  PendingLimits limits;
  // Room for every node to arrive at once with a stale connection of its own (a restarting pod
  // reconnects before rank 0 sees the old one close), plus a few strays such as health probes.
  limits.max_pending = 2 * static_cast<size_t>(std::max(nnodes, 1)) + 16;
  return limits;
}

namespace {

// Whether to log the count-th occurrence of a flood: the 1st, 10th, 100th, ... so a flood shows
// in the log without filling it.
bool worth_logging(int count) {
  while (count >= 10 && count % 10 == 0) count /= 10;
  return count == 1;
}

std::string milliseconds_text(Clock::duration span) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(span).count()) +
         " ms";
}

// The errors accept(2) lists as the new connection's own network errors, which Linux passes on
// from accept: the man page says to treat them like EAGAIN by retrying.
bool is_connection_error(int error) {
  switch (error) {
    case ECONNABORTED:
    case ENETDOWN:
    case EPROTO:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH:
      return true;
    default:
      return false;
  }
}

}  // namespace

Coordinator::Coordinator(JoinRequest self, int port)
    : Coordinator(self, port, pending_limits_for(self.nnodes)) {}

Coordinator::Coordinator(JoinRequest self, int port, PendingLimits limits)
    : self_(std::move(self)),
      limits_(limits),
      listener_(listen_tcp(port)),
      spare_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {
  members_.resize(static_cast<size_t>(self_.nnodes));
  reports_.resize(static_cast<size_t>(self_.nnodes));
  reports_[0] = self_.report;
}

bool Coordinator::admit(std::unique_ptr<LineConnection>& connection, const Json& message) {
  NodeReport report;
  std::optional<std::string> why = refuse_join(self_, message, report);
  if (!why && members_[static_cast<size_t>(report.rank)]) {
    why = "node rank " + std::to_string(report.rank) + " has already joined";
  }
  if (why) {
    log_warning("refused a join from " + peer_address(connection->fd()) + ": " + *why);
    Json reject = Json::object();
    reject.set("t", "reject").set("why", *why);
    connection->send(reject);
    return false;
  }
  if (reached_interface_.empty()) {
    reached_interface_ = interface_of_address(local_address(connection->fd()));
  }
  reports_[static_cast<size_t>(report.rank)] = report;
  members_[static_cast<size_t>(report.rank)] = std::move(connection);
  return true;
}

int Coordinator::read_pending(const std::vector<bool>& ready) {
  int admitted = 0;
  std::deque<Pending> still_pending;
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& entry = pending_[i];
    if (!ready[i]) {
      still_pending.push_back(std::move(entry));
      continue;
    }
    std::vector<Json> messages;
    bool open = entry.connection->receive(messages);
    if (!messages.empty()) {
      admitted += admit(entry.connection, messages.front()) ? 1 : 0;
    } else if (open) {
      still_pending.push_back(std::move(entry));
    } else if (!entry.connection->failure().empty()) {
      log_warning("closed a connection from " + peer_address(entry.connection->fd()) + " that " +
                  entry.connection->failure());
    }
  }
  pending_ = std::move(still_pending);
  return admitted;
}

void Coordinator::expire_pending(Clock::time_point now) {
  // Accepted in order with the same allowance each, so the expired ones are at the front.
  while (!pending_.empty() && pending_.front().join_by <= now) {
    if (worth_logging(++dropped_for_deadline_)) {
      log_warning("closed a connection from " + peer_address(pending_.front().connection->fd()) +
                  " that sent no join within " + milliseconds_text(limits_.join_within) + " (" +
                  std::to_string(dropped_for_deadline_) + " so far)");
    }
    pending_.pop_front();
  }
}

void Coordinator::accept_pending() {
  for (;;) {
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      pending_.push_back({std::make_unique<LineConnection>(Fd(fd), kMaxMemberLine),
                          Clock::now() + limits_.join_within});
      if (pending_.size() > limits_.max_pending) {
        // The oldest has had the longest to join; a real node that loses its place retries.
        if (worth_logging(++dropped_for_bound_)) {
          log_warning("more than " + std::to_string(limits_.max_pending) +
                      " connections have not joined; closed the oldest, from " +
                      peer_address(pending_.front().connection->fd()) + " (" +
                      std::to_string(dropped_for_bound_) + " so far)");
        }
        pending_.pop_front();
      }
      continue;
    }
    int error = errno;
    if (error == EINTR || is_connection_error(error)) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) return;
    if (error == EMFILE || error == ENFILE) {
      shed_when_out_of_descriptors(error);
    } else {
      // ENOBUFS, ENOMEM: the kernel is short of memory; retrying at once would only spin.
      log_warning(std::string("accept: ") + std::strerror(error) + "; pausing accepts for " +
                  milliseconds_text(limits_.accept_pause));
      accept_paused_until_ = Clock::now() + limits_.accept_pause;
    }
    return;
  }
}

void Coordinator::shed_when_out_of_descriptors(int error) {
  // accept(2) fails with EMFILE or ENFILE but leaves the connection queued, so the listener stays
  // readable and a poll() loop spins at full CPU while the queued nodes wait for nothing
  // (issue #11 item 15; libev's manual, "The special problem of accept()ing when you can't").
  // Two remedies, as event loops use them. Give up a reserved descriptor to accept the head of
  // the queue and close it at once, so the queue moves and that client sees a close and retries
  // (libuv's uv__emfile_trick in src/unix/stream.c; Linux reports EMFILE before EAGAIN, so one
  // attempt only, as libuv commit b3ab332 learned). And stop watching the listener for a moment,
  // as nginx's ngx_event_accept() does on EMFILE/ENFILE for accept_mutex_delay.
  if (spare_.valid()) {
    spare_ = Fd();
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) ::close(fd);
    spare_ = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  }
  accept_paused_until_ = Clock::now() + limits_.accept_pause;
  if (worth_logging(++dropped_for_descriptors_)) {
    log_warning(std::string("accept: ") + std::strerror(error) +
                "; closed a queued connection and paused accepts for " +
                milliseconds_text(limits_.accept_pause) + " (" +
                std::to_string(dropped_for_descriptors_) + " times so far)");
  }
}

Clock::time_point Coordinator::next_wakeup(Clock::time_point deadline) const {
  Clock::time_point wake = deadline;
  if (!pending_.empty()) wake = std::min(wake, pending_.front().join_by);
  if (accept_paused_until_ > Clock::now()) wake = std::min(wake, accept_paused_until_);
  return wake;
}

std::vector<NodeReport> Coordinator::gather(Clock::time_point deadline, Clock::duration patience) {
  int joined = 1;
  while (joined < self_.nnodes && Clock::now() < deadline) {
    // poll() ignores a negative descriptor: while accepting is paused the listener is not watched.
    int listener = Clock::now() >= accept_paused_until_ ? listener_.get() : -1;
    std::vector<pollfd> fds = {{signal_fd(), POLLIN, 0}, {listener, POLLIN, 0}};
    std::vector<size_t> polled_ranks;
    for (size_t rank = 1; rank < members_.size(); ++rank) {
      if (!members_[rank]) continue;
      fds.push_back({members_[rank]->fd(), POLLIN, 0});
      polled_ranks.push_back(rank);
    }
    size_t first_pending = fds.size();
    for (const Pending& entry : pending_) fds.push_back({entry.connection->fd(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), poll_timeout_ms(next_wakeup(deadline)));
    if (fds[0].revents) throw_if_terminated();

    // Joined members say nothing before the plan; readable means they went away.
    for (size_t i = 0; i < polled_ranks.size(); ++i) {
      if (!fds[2 + i].revents) continue;
      std::vector<Json> ignored;
      if (!members_[polled_ranks[i]]->receive(ignored)) {
        log_warning("node " + std::to_string(polled_ranks[i]) +
                    " left before the plan; waiting for it again");
        members_[polled_ranks[i]].reset();
        --joined;
      }
    }
    std::vector<bool> ready;
    for (size_t i = first_pending; i < fds.size(); ++i) ready.push_back(fds[i].revents != 0);
    int added = read_pending(ready);
    joined += added;
    if (added > 0 && patience > Clock::duration::zero() && joined < self_.nnodes) {
      deadline = std::max(deadline, Clock::now() + patience);
      tell_members_to_wait();
    }
    expire_pending(Clock::now());
    if (fds[1].revents) accept_pending();
  }
  if (joined < self_.nnodes) fail_with_timeout(joined);
  pending_.clear();
  return reports_;
}

void Coordinator::tell_members_to_wait() {
  Json wait = Json::object();
  wait.set("t", "wait");
  // A member that cannot be told has gone; the gather loop sees it readable and drops it.
  for (const auto& member : members_) {
    if (member) member->send(wait);
  }
}

void Coordinator::fail_with_timeout(int joined) {
  std::vector<std::string> missing;
  for (size_t rank = 1; rank < members_.size(); ++rank) {
    if (!members_[rank]) missing.push_back(std::to_string(rank));
    if (missing.size() == 8) {
      missing.push_back("...");
      break;
    }
  }
  std::string why = "rendezvous timeout: " + std::to_string(self_.nnodes - joined) + " of " +
                    std::to_string(self_.nnodes) + " nodes never joined (ranks ";
  for (size_t i = 0; i < missing.size(); ++i) why += (i ? "," : "") + missing[i];
  why += ")";
  Json timeout = Json::object();
  timeout.set("t", "timeout").set("why", why);
  for (const auto& member : members_) {
    if (member) member->send(timeout);
  }
  throw BootError(kExitRendezvousTimeout, why);
}

void Coordinator::send_plan(const JobPlan& plan) {
  Json message = Json::object();
  message.set("t", "plan").set("plan", plan_to_json(plan));
  for (size_t rank = 1; rank < members_.size(); ++rank) {
    if (members_[rank] && !members_[rank]->send(message)) {
      throw BootError(kExitPeerLost, "peer lost: node " + std::to_string(rank) +
                                         " went away before it received the plan");
    }
  }
}

Membership join_rendezvous(const Endpoint& rank0, JoinRequest request,
                           Clock::time_point connect_deadline, double rendezvous_s,
                           const Resolver& resolver) {
  bool fill_host = request.report.host.empty();
  std::optional<Clock::time_point> plan_deadline;
  Clock::duration rejoin_wait = std::chrono::milliseconds(50);
  for (;;) {
    Fd fd = connect_with_retry(rank0, connect_deadline, resolver);
    // Rank 0 started no later than this connect, so its own deadline ends before this one.
    if (!plan_deadline) {
      plan_deadline = time_after(Clock::now(), rendezvous_s + 2);
      connect_deadline = std::max(connect_deadline, *plan_deadline);
    }
    Membership membership;
    membership.local_address = local_address(fd.get());
    if (fill_host) request.report.host = membership.local_address;
    membership.link = std::make_unique<LineConnection>(std::move(fd));
    if (!membership.link->send(join_to_json(request))) continue;

    bool open = true;
    while (open) {
      pollfd fds[2] = {{signal_fd(), POLLIN, 0}, {membership.link->fd(), POLLIN, 0}};
      if (Clock::now() >= *plan_deadline) {
        throw BootError(kExitRendezvousTimeout,
                        "rendezvous timeout: joined rank 0 but no plan came in time");
      }
      ::poll(fds, 2, poll_timeout_ms(*plan_deadline));
      if (fds[0].revents) throw_if_terminated();
      if (!fds[1].revents) continue;
      std::vector<Json> messages;
      open = membership.link->receive(messages);
      for (const Json& message : messages) {
        const Json* type = message.find("t");
        const Json* why = message.find("why");
        std::string reason = why && why->is_string() ? why->as_string() : "";
        if (type && *type == Json("plan") && message.find("plan")) {
          membership.plan = plan_from_json(*message.find("plan"));
          return membership;
        }
        if (type && *type == Json("reject")) {
          throw BootError(kExitConfigError, "rejected by rank 0: " + reason);
        }
        if (type && *type == Json("timeout")) throw BootError(kExitRendezvousTimeout, reason);
        // Another node joined rank 0, which now waits `rendezvous_s` from then: so do we.
        if (type && *type == Json("wait")) {
          plan_deadline = std::max(*plan_deadline, time_after(Clock::now(), rendezvous_s + 2));
        }
      }
    }
    // Rank 0 went away before the plan (a restarting pod), or closed this connection to shed a
    // flood (out of descriptors, too many pending): join it again, backing off so that its own
    // members do not add to the flood.
    log_warning("rank 0 closed the connection before the plan; joining again");
    sleep_until(std::min(Clock::now() + rejoin_wait, *plan_deadline));
    rejoin_wait = std::min<Clock::duration>(2 * rejoin_wait, std::chrono::seconds(1));
  }
}

}  // namespace boot
