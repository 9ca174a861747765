#pragma once
// The job plan: what rank 0 decides once for every node and sends to all of them, so every node
// runs with the same transport, master address and host order.

#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "json.h"

namespace boot {

/// What one node told rank 0 at the rendezvous.
struct NodeReport {
  int rank = 0;
  std::string host;  ///< how peers and DeepSpeed reach it (a DNS name or an address)
  bool rdma_usable = false;
  std::string rdma_detail;  ///< the probe's one-line verdict
  int gpu_count = 0;
};

/// The decision shared by every node; each node derives its own environment from it.
struct JobPlan {
  int nnodes = 1;
  int nproc_per_node = 1;
  std::string run_id;
  std::string transport;         ///< "rdma" or "tcp", the same on every node
  std::string transport_reason;  ///< why, naming the node that forced TCP if one did
  /// Non-empty when boot.json requires RDMA and a node cannot use it: every node fails with it.
  std::string transport_error;
  std::string master_addr;
  int master_port = 0;
  std::vector<std::string> hosts;  ///< hosts[i] is node i
  std::string nccl_unique_id;      ///< hex ncclUniqueId for --nccl-check, empty otherwise

  int world_size() const { return nnodes * nproc_per_node; }
};

/// Makes the one transport decision: RDMA only if boot.json asks for it and every node can use
/// it, because NCCL hangs at init when one node uses IB and another sockets. "rdma" never
/// degrades: a node without RDMA sets transport_error; "auto" falls back to TCP.
JobPlan decide_plan(const BootConfig& config, const std::vector<NodeReport>& reports,
                    const std::string& run_id);

/// Why a plan from rank 0 is not one for this node's boot.json (`nnodes` as this node resolved
/// it): a node runs what its plan says, so a forged `nproc_per_node` of 500 would fork 500
/// workers. The job, shape, master port and transport must be boot.json's, the hosts plain
/// host names or addresses, the NCCL id hex. nullopt when it matches.
std::optional<std::string> plan_mismatch(const BootConfig& config, int nnodes, const JobPlan& plan);

/// The plan as the rendezvous sends it.
Json plan_to_json(const JobPlan& plan);

/// The plan from a rendezvous message; throws BootError(kExitConfigError) when malformed.
JobPlan plan_from_json(const Json& json);

/// A report as it travels in a join message.
Json report_to_json(const NodeReport& report);

/// A report from a join message; false when malformed.
bool report_from_json(const Json& json, NodeReport& report);

}  // namespace boot
