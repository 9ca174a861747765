#include "rendezvous.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>

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

Coordinator::Coordinator(JoinRequest self, int port)
    : self_(std::move(self)), listener_(listen_tcp(port)) {
  members_.resize(static_cast<size_t>(self_.nnodes));
  reports_.resize(static_cast<size_t>(self_.nnodes));
  reports_[0] = self_.report;
}

std::optional<std::string> Coordinator::refuse(const Json& message, NodeReport& report) const {
  const Json* type = message.find("t");
  if (!type || *type != Json("join")) return "expected a join message";
  const Json* version = message.find("v");
  if (!version || *version != Json(kProtocolVersion)) {
    return "protocol version differs (rank 0 speaks " + std::to_string(kProtocolVersion) + ")";
  }
  const Json* job = message.find("job");
  const Json* token = message.find("token");
  if (!job || *job != Json(self_.job) || !token || *token != Json(self_.token)) {
    return "foreign job: job name or job token differs from rank 0's (" + self_.job + ")";
  }
  const Json* nnodes = message.find("nnodes");
  const Json* nproc = message.find("nproc_per_node");
  if (!nnodes || *nnodes != Json(self_.nnodes) || !nproc || *nproc != Json(self_.nproc_per_node)) {
    return "nnodes or nproc_per_node differs from rank 0's (" + std::to_string(self_.nnodes) +
           " x " + std::to_string(self_.nproc_per_node) + ")";
  }
  const Json* body = message.find("report");
  if (!body || !report_from_json(*body, report)) return "malformed node report";
  if (report.rank < 1 || report.rank >= self_.nnodes) {
    return "node rank " + std::to_string(report.rank) + " is out of range for " +
           std::to_string(self_.nnodes) + " nodes";
  }
  if (members_[static_cast<size_t>(report.rank)]) {
    return "node rank " + std::to_string(report.rank) + " has already joined";
  }
  return std::nullopt;
}

void Coordinator::accept_pending() {
  for (;;) {
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    pending_.push_back(std::make_unique<LineConnection>(Fd(fd)));
  }
}

std::vector<NodeReport> Coordinator::gather(Clock::time_point deadline) {
  int joined = 1;
  while (joined < self_.nnodes && Clock::now() < deadline) {
    std::vector<pollfd> fds = {{signal_fd(), POLLIN, 0}, {listener_.get(), POLLIN, 0}};
    std::vector<size_t> polled_ranks;
    for (size_t rank = 1; rank < members_.size(); ++rank) {
      if (!members_[rank]) continue;
      fds.push_back({members_[rank]->fd(), POLLIN, 0});
      polled_ranks.push_back(rank);
    }
    size_t first_pending = fds.size();
    for (const auto& connection : pending_) fds.push_back({connection->fd(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), poll_timeout_ms(deadline));
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
    std::vector<std::unique_ptr<LineConnection>> still_pending;
    for (size_t i = 0; i < pending_.size(); ++i) {
      std::unique_ptr<LineConnection>& connection = pending_[i];
      if (!fds[first_pending + i].revents) {
        still_pending.push_back(std::move(connection));
        continue;
      }
      std::vector<Json> messages;
      bool open = connection->receive(messages);
      if (messages.empty()) {
        if (open) still_pending.push_back(std::move(connection));
        continue;
      }
      NodeReport report;
      if (std::optional<std::string> why = refuse(messages.front(), report)) {
        log_warning("refused a join from " + peer_address(connection->fd()) + ": " + *why);
        Json reject = Json::object();
        reject.set("t", "reject").set("why", *why);
        connection->send(reject);
        continue;
      }
      if (reached_interface_.empty()) {
        reached_interface_ = interface_of_address(local_address(connection->fd()));
      }
      reports_[static_cast<size_t>(report.rank)] = report;
      members_[static_cast<size_t>(report.rank)] = std::move(connection);
      ++joined;
    }
    pending_ = std::move(still_pending);
    if (fds[1].revents) accept_pending();
  }
  if (joined < self_.nnodes) {
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
  pending_.clear();
  return reports_;
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
  for (;;) {
    Fd fd = connect_with_retry(rank0, connect_deadline, resolver);
    // Rank 0 started no later than this connect, so its own deadline ends before this one.
    if (!plan_deadline) {
      plan_deadline = Clock::now() +
                      std::chrono::milliseconds(static_cast<long long>(rendezvous_s * 1000) + 2000);
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
      }
    }
    // Rank 0 went away before the plan (a restarting pod): join it again.
    log_warning("rank 0 closed the connection before the plan; joining again");
  }
}

}  // namespace boot
