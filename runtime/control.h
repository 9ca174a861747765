#pragma once
// The control channel after the rendezvous: heartbeats, failure fan-out and the exit barrier over
// the connections the rendezvous left open. rank 0 is the hub; members talk only to it.

#include <memory>
#include <string>
#include <vector>

#include <poll.h>

#include "net.h"

namespace boot {

/// What the control channel tells the supervisor.
struct ControlEvent {
  enum Kind { kNone, kAbort, kFinish };
  Kind kind = kNone;
  int code = 0;     ///< for kAbort: the exit code every node ends with
  std::string why;  ///< for kAbort: one line for stderr
};

/// One node's end of the control channel; the supervisor polls its fds with the children's.
class ControlLink {
 public:
  virtual ~ControlLink() = default;
  /// Adds the descriptors to wait on for reading.
  virtual void add_pollfds(std::vector<pollfd>& fds) const = 0;
  /// Reads what arrived, sends heartbeats that are due and checks the peers' ones; returns the
  /// first event: another node failed or was lost (kAbort), or every node is done (kFinish).
  virtual ControlEvent service() = 0;
  /// This node's workers failed with `code`; every other node must stop too.
  virtual void report_failure(int code, const std::string& why) = 0;
  /// This node's workers all succeeded; the job ends when every node has said so.
  virtual void report_done() = 0;
  /// When service() must run next at the latest (the next heartbeat).
  virtual Clock::time_point next_wakeup() const = 0;
};

/// A control link for a single-node job: nothing to tell anyone.
std::unique_ptr<ControlLink> make_solo_link();

/// Rank 0's hub over the member connections (index = rank, index 0 empty).
std::unique_ptr<ControlLink> make_coordinator_link(
    std::vector<std::unique_ptr<LineConnection>> members, double heartbeat_s);

/// A member's link to rank 0.
std::unique_ptr<ControlLink> make_member_link(std::unique_ptr<LineConnection> rank0,
                                              double heartbeat_s);

/// Missed heartbeats after which a peer counts as lost.
inline constexpr int kMissedHeartbeats = 3;

}  // namespace boot
