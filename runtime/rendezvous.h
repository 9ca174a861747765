#pragma once
// Phase 4, rendezvous: rank 0 listens on its own port (never MASTER_PORT, which its trainer
// needs); every other node joins with the job's token and its probe report; rank 0 checks them,
// decides one plan and sends it to all. The connections stay open as the control channel.

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "discovery.h"
#include "net.h"
#include "plan.h"

namespace boot {

/// Bumped whenever a message changes meaning, so mixed mlenv-boot builds refuse each other.
inline constexpr int kProtocolVersion = 2;

/// What a node says when it joins.
struct JoinRequest {
  std::string job;
  std::string token;  ///< per job: MLENV_JOB_TOKEN, or derived from the job and config digest
  int nnodes = 1;
  int nproc_per_node = 1;
  NodeReport report;
};

/// The join message on the wire.
Json join_to_json(const JoinRequest& request);

/// Why rank 0 refuses a join message from a node (wrong protocol, job, token, shape or rank), or
/// nothing when `self` (rank 0's own request) accepts it; fills `report` from the message. Whether
/// the rank has already joined is the Coordinator's business.
std::optional<std::string> refuse_join(const JoinRequest& self, const Json& message,
                                       NodeReport& report);

/// Bounds on the connections rank 0 holds before they join, so that idle or hostile clients
/// cannot keep the real nodes out (runtime/README.md, "Limits").
struct PendingLimits {
  size_t max_pending = 16;  ///< beyond this many, the oldest not-yet-joined connection is closed
  Clock::duration join_within = std::chrono::seconds(10);  ///< closed when no join came by then
  Clock::duration accept_pause = std::chrono::milliseconds(100);  ///< out of descriptors
};

/// The limits rank 0 uses: 2 * nnodes + 16 pending connections, 10 s to join, 100 ms pauses.
PendingLimits pending_limits_for(int nnodes);

/// Rank 0's side of the rendezvous.
class Coordinator {
 public:
  /// Starts listening at once, so members that arrive early are queued by the kernel.
  Coordinator(JoinRequest self, int port);
  /// The same with explicit limits, for tests.
  Coordinator(JoinRequest self, int port, PendingLimits limits);

  /// Waits until every node has joined and returns their reports by rank; at the deadline tells
  /// the members that came and throws BootError(kExitRendezvousTimeout). Each node that joins
  /// moves the deadline to at least `patience` from then, and tells the members to wait as
  /// long (`{"t":"wait"}`): nodes of a cold start arrive minutes apart (image pulls), and the
  /// gang times out only when no node has come for `patience`.
  std::vector<NodeReport> gather(Clock::time_point deadline,
                                 Clock::duration patience = Clock::duration::zero());

  /// The local interface members reached this node through, empty with no members.
  const std::string& reached_interface() const { return reached_interface_; }

  /// Sends the plan to every member; a member that cannot be told is lost.
  void send_plan(const JobPlan& plan);

  /// Hands the member connections (index = rank, index 0 empty) to the control channel.
  std::vector<std::unique_ptr<LineConnection>> take_members() { return std::move(members_); }

 private:
  // A connection that has not joined yet, and when it must have.
  struct Pending {
    std::unique_ptr<LineConnection> connection;
    Clock::time_point join_by;
  };

  /// Reads the pending connections poll() found readable (flags in `ready`, in pending_'s
  /// order); admits joins and refuses the rest. Returns how many joined.
  int read_pending(const std::vector<bool>& ready);
  /// Admits a join from `connection`, or refuses it with a reason; true when admitted.
  bool admit(std::unique_ptr<LineConnection>& connection, const Json& message);
  /// Closes pending connections past their join deadline.
  void expire_pending(Clock::time_point now);
  /// Accepts what the listener queued, closing the oldest pending connections beyond the bound.
  void accept_pending();
  /// accept() failed for want of descriptors: drop one queued connection and pause accepting.
  void shed_when_out_of_descriptors(int error);
  /// When the loop must wake at the latest: the deadline, the next join deadline, the pause end.
  Clock::time_point next_wakeup(Clock::time_point deadline) const;
  /// Tells every member that joined to wait `patience` more for the plan.
  void tell_members_to_wait();
  [[noreturn]] void fail_with_timeout(int joined);

  JoinRequest self_;
  PendingLimits limits_;
  Fd listener_;
  Fd spare_;  ///< a reserved descriptor, given up to accept-and-close when none is left
  Clock::time_point accept_paused_until_;
  std::deque<Pending> pending_;
  std::vector<std::unique_ptr<LineConnection>> members_;
  std::vector<NodeReport> reports_;
  std::string reached_interface_;
  int dropped_for_bound_ = 0;
  int dropped_for_deadline_ = 0;
  int dropped_for_descriptors_ = 0;
};

/// A member's result: the plan and the open connection to rank 0.
struct Membership {
  JobPlan plan;
  std::unique_ptr<LineConnection> link;
  std::string local_address;  ///< the address that reached rank 0
};

/// Reaches rank 0 (retrying until `connect_deadline`), joins, and waits for the plan. An empty
/// report.host is filled with the local address that reached rank 0. Throws
/// BootError(kExitConfigError) when rank 0 refuses the join, BootError(kExitRendezvousTimeout)
/// when rank 0 or the plan does not come in time.
Membership join_rendezvous(const Endpoint& rank0, JoinRequest request,
                           Clock::time_point connect_deadline, double rendezvous_s,
                           const Resolver& resolver = system_resolver);

}  // namespace boot
