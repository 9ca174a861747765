#pragma once
// Phase 4, rendezvous: rank 0 listens on its own port (never MASTER_PORT, which its trainer
// needs); every other node joins with the job's token and its probe report; rank 0 checks them,
// decides one plan and sends it to all. The connections stay open as the control channel.

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

/// Rank 0's side of the rendezvous.
class Coordinator {
 public:
  /// Starts listening at once, so members that arrive early are queued by the kernel.
  Coordinator(JoinRequest self, int port);

  /// Waits until every node has joined and returns their reports by rank; at the deadline tells
  /// the members that came and throws BootError(kExitRendezvousTimeout).
  std::vector<NodeReport> gather(Clock::time_point deadline);

  /// The local interface members reached this node through, empty with no members.
  const std::string& reached_interface() const { return reached_interface_; }

  /// Sends the plan to every member; a member that cannot be told is lost.
  void send_plan(const JobPlan& plan);

  /// Hands the member connections (index = rank, index 0 empty) to the control channel.
  std::vector<std::unique_ptr<LineConnection>> take_members() { return std::move(members_); }

 private:
  /// The reason to refuse a join message, or nothing when it is acceptable.
  std::optional<std::string> refuse(const Json& message, NodeReport& report) const;
  void accept_pending();

  JoinRequest self_;
  Fd listener_;
  std::vector<std::unique_ptr<LineConnection>> pending_;
  std::vector<std::unique_ptr<LineConnection>> members_;
  std::vector<NodeReport> reports_;
  std::string reached_interface_;
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
