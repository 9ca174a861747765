#include "control.h"

#include "exit_code.h"
#include "log.h"

namespace boot {
namespace {

Json message(const char* type) {
  Json out = Json::object();
  out.set("t", type);
  return out;
}

Json abort_message(int code, const std::string& why) {
  Json out = message("abort");
  out.set("code", code).set("why", why);
  return out;
}

std::string text_of(const Json& json, const char* key) {
  const Json* value = json.find(key);
  return value && value->is_string() ? value->as_string() : "";
}

int code_of(const Json& json) {
  const Json* value = json.find("code");
  return value && value->is_integer() ? static_cast<int>(value->as_int()) : 1;
}

class SoloLink : public ControlLink {
 public:
  void add_pollfds(std::vector<pollfd>&) const override {}
  ControlEvent service() override {
    return done_ ? ControlEvent{ControlEvent::kFinish, 0, ""} : ControlEvent{};
  }
  void report_failure(int, const std::string&) override {}
  void report_done() override { done_ = true; }
  Clock::time_point next_wakeup() const override { return Clock::time_point::max(); }

 private:
  bool done_ = false;
};

// A peer connection with its heartbeat bookkeeping.
struct Peer {
  int rank = 0;
  std::unique_ptr<LineConnection> connection;
  Clock::time_point last_heard;
  bool done = false;
};

class CoordinatorLink : public ControlLink {
 public:
  CoordinatorLink(std::vector<std::unique_ptr<LineConnection>> members, double heartbeat_s)
      : interval_(clock_duration(heartbeat_s)), next_beat_(Clock::now()) {
    for (size_t rank = 1; rank < members.size(); ++rank) {
      peers_.push_back({static_cast<int>(rank), std::move(members[rank]), Clock::now(), false});
    }
  }

  void add_pollfds(std::vector<pollfd>& fds) const override {
    for (const Peer& peer : peers_) {
      if (peer.connection) fds.push_back({peer.connection->fd(), POLLIN, 0});
    }
  }

  ControlEvent service() override {
    auto now = Clock::now();
    for (Peer& peer : peers_) {
      if (!peer.connection || pending_.kind != ControlEvent::kNone) continue;
      std::vector<Json> messages;
      bool open = peer.connection->receive(messages);
      if (!messages.empty()) peer.last_heard = now;
      for (const Json& received : messages) {
        std::string type = text_of(received, "t");
        if (type == "fail") {
          std::string why =
              "node " + std::to_string(peer.rank) + " failed: " + text_of(received, "why");
          fail_all(code_of(received), why, peer.rank);
        } else if (type == "done") {
          peer.done = true;
        }
      }
      if (pending_.kind != ControlEvent::kNone) break;
      if (!open || now - peer.last_heard > kMissedHeartbeats * interval_) {
        peer.connection.reset();
        fail_all(kExitPeerLost,
                 "peer lost: node " + std::to_string(peer.rank) +
                     (open ? " missed " + std::to_string(kMissedHeartbeats) + " heartbeats"
                           : " closed the control connection"),
                 peer.rank);
      }
    }
    if (pending_.kind == ControlEvent::kNone && now >= next_beat_) {
      for (Peer& peer : peers_) {
        if (peer.connection && !peer.connection->send(message("hb"))) {
          peer.connection.reset();
          fail_all(kExitPeerLost,
                   "peer lost: node " + std::to_string(peer.rank) + " cannot be reached",
                   peer.rank);
          break;
        }
      }
      next_beat_ = now + interval_;
    }
    if (pending_.kind == ControlEvent::kNone && self_done_) {
      bool all_done = true;
      for (const Peer& peer : peers_) all_done = all_done && peer.done;
      if (all_done) {
        // The exit barrier: every node's workers succeeded, so everyone may leave now.
        for (Peer& peer : peers_) {
          if (peer.connection) peer.connection->send(message("finish"));
        }
        pending_ = {ControlEvent::kFinish, 0, ""};
      }
    }
    if (pending_.kind == ControlEvent::kNone || delivered_) return {};
    delivered_ = true;
    return pending_;
  }

  void report_failure(int code, const std::string& why) override {
    fail_all(code, "node 0 failed: " + why, 0);
    delivered_ = true;  // this node knows already: the supervisor is stopping its own workers
  }

  void report_done() override { self_done_ = true; }

  Clock::time_point next_wakeup() const override { return next_beat_; }

 private:
  void fail_all(int code, const std::string& why, int except_rank) {
    if (told_) return;
    told_ = true;
    for (Peer& peer : peers_) {
      if (peer.rank != except_rank && peer.connection) {
        peer.connection->send(abort_message(code, why));
      }
    }
    pending_ = {ControlEvent::kAbort, code, why};
  }

  std::vector<Peer> peers_;
  Clock::duration interval_;
  Clock::time_point next_beat_;
  ControlEvent pending_;
  bool self_done_ = false;
  bool told_ = false;
  bool delivered_ = false;
};

class MemberLink : public ControlLink {
 public:
  MemberLink(std::unique_ptr<LineConnection> rank0, double heartbeat_s)
      : rank0_(std::move(rank0)),
        interval_(clock_duration(heartbeat_s)),
        next_beat_(Clock::now()),
        last_heard_(Clock::now()) {}

  void add_pollfds(std::vector<pollfd>& fds) const override {
    if (rank0_) fds.push_back({rank0_->fd(), POLLIN, 0});
  }

  ControlEvent service() override {
    if (!rank0_ || delivered_) return {};
    auto now = Clock::now();
    std::vector<Json> messages;
    bool open = rank0_->receive(messages);
    if (!messages.empty()) last_heard_ = now;
    for (const Json& received : messages) {
      std::string type = text_of(received, "t");
      if (type == "abort")
        return deliver({ControlEvent::kAbort, code_of(received), text_of(received, "why")});
      if (type == "finish") return deliver({ControlEvent::kFinish, 0, ""});
    }
    if (!open) {
      return deliver(
          {ControlEvent::kAbort, kExitPeerLost, "peer lost: rank 0 closed the control connection"});
    }
    if (now - last_heard_ > kMissedHeartbeats * interval_) {
      return deliver(
          {ControlEvent::kAbort, kExitPeerLost,
           "peer lost: rank 0 missed " + std::to_string(kMissedHeartbeats) + " heartbeats"});
    }
    if (now >= next_beat_) {
      if (!rank0_->send(message("hb"))) {
        return deliver(
            {ControlEvent::kAbort, kExitPeerLost, "peer lost: rank 0 cannot be reached"});
      }
      next_beat_ = now + interval_;
    }
    return {};
  }

  void report_failure(int code, const std::string& why) override {
    if (!rank0_) return;
    Json out = message("fail");
    out.set("code", code).set("why", why);
    rank0_->send(out);
    delivered_ = true;  // this node is stopping on its own; later news changes nothing
  }

  void report_done() override {
    if (rank0_) rank0_->send(message("done"));
  }

  Clock::time_point next_wakeup() const override {
    return std::min(next_beat_,
                    last_heard_ + kMissedHeartbeats * interval_ + std::chrono::milliseconds(1));
  }

 private:
  ControlEvent deliver(ControlEvent event) {
    delivered_ = true;
    return event;
  }

  std::unique_ptr<LineConnection> rank0_;
  Clock::duration interval_;
  Clock::time_point next_beat_;
  Clock::time_point last_heard_;
  bool delivered_ = false;
};

}  // namespace

std::unique_ptr<ControlLink> make_solo_link() {
  return std::make_unique<SoloLink>();
}

std::unique_ptr<ControlLink> make_coordinator_link(
    std::vector<std::unique_ptr<LineConnection>> members, double heartbeat_s) {
  return std::make_unique<CoordinatorLink>(std::move(members), heartbeat_s);
}

std::unique_ptr<ControlLink> make_member_link(std::unique_ptr<LineConnection> rank0,
                                              double heartbeat_s) {
  return std::make_unique<MemberLink>(std::move(rank0), heartbeat_s);
}

}  // namespace boot
