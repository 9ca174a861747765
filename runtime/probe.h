#pragma once
// Phase 3, probe: what this node can do for NCCL, read from sysfs and procfs through configurable
// roots so fixture trees stand in for hardware in tests.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "json.h"

namespace boot {

/// Where the probe reads; tests point these at fixture trees.
struct ProbeRoots {
  std::string sysfs = "/sys";
  std::string proc = "/proc";
  std::string dev = "/dev";
};

/// One port of one HCA as sysfs shows it, and whether NCCL can use it.
struct RdmaPort {
  std::string device;  ///< "mlx5_2"
  int port = 1;
  std::string state;              ///< "4: ACTIVE"
  std::string link_layer;         ///< "InfiniBand" or "Ethernet"
  std::string netdev;             ///< the interface behind the port ("net1"), empty when unknown
  int gid_index = -1;             ///< the chosen GID (RoCE: IPv4 RoCE v2), -1 when none
  bool virtual_function = false;  ///< an SR-IOV VF (device/physfn exists)
  bool usable = false;
  std::string why_not;  ///< why a port is unusable, for the log and the plan
};

/// The memlock limit before and after raising the soft limit to the hard one.
struct MemlockState {
  bool soft_unlimited = false;
  std::uint64_t soft_bytes = 0;
  bool hard_unlimited = false;
  std::uint64_t hard_bytes = 0;
  bool raised = false;
};

/// Everything the probe learned about this node.
struct ProbeResult {
  std::vector<RdmaPort> ports;
  bool uverbs = false;           ///< /dev/infiniband/uverbs* present (else NCCL silently uses TCP)
  bool gpudirect = false;        ///< a peer-memory module is loaded
  std::optional<bool> ipc_lock;  ///< CapEff bit 14, nothing when /proc/self/status is unreadable
  MemlockState memlock;
  int gpu_count = 0;
  bool rdma_usable = false;
  std::string rdma_detail;  ///< why RDMA is (not) usable, one line
  std::vector<std::string> warnings;
};

/// What to look at: the HCAs the rails mapped to on this node (exact names; empty means every
/// HCA unless `rails_configured`), and the rails no HCA was found for.
struct ProbeOptions {
  ProbeRoots roots;
  std::vector<std::string> devices;
  bool rails_configured = false;          ///< boot.json names rails: never probe other HCAs
  std::vector<std::string> unmapped_why;  ///< one reason per rail that has no HCA on this node
  std::uint64_t min_memlock_bytes = std::uint64_t{1} << 30;
};

/// Reads every port of the named (or all) HCAs under <sysfs>/class/infiniband.
std::vector<RdmaPort> probe_rdma_ports(const ProbeRoots& roots,
                                       const std::vector<std::string>& devices,
                                       std::vector<std::string>& warnings);

/// The RoCE GID index NCCL >= 2.21 would pick: the lowest valid IPv4-mapped RoCE v2 GID with a
/// readable netdev (link-local, zero and IPv6-only GIDs do not count); -1 when there is none.
int choose_roce_gid(const std::string& port_dir, std::string& netdev);

/// CapEff bit 14 (CAP_IPC_LOCK) from <proc>/self/status; nothing when unreadable.
std::optional<bool> read_ipc_lock(const std::string& proc_root);

/// Raises RLIMIT_MEMLOCK's soft limit to the hard one (no privilege needed; children inherit it).
MemlockState raise_memlock();

/// Whether pinning NCCL's buffers will work: IPC_LOCK, or a memlock limit of at least `floor`.
bool memlock_sufficient(const std::optional<bool>& ipc_lock, const MemlockState& memlock,
                        std::uint64_t floor, std::string& why_not);

/// Runs the whole probe (and raises the memlock soft limit as a side effect).
ProbeResult probe_node(const ProbeOptions& options);

/// The probe as JSON, for the dry-run plan and the log.
Json probe_to_json(const ProbeResult& probe);

}  // namespace boot
