#pragma once
// boot.json, the bootstrap config the compiler emits (runtime/BOOT_CONFIG.md), as a typed value.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace boot {

/// One RDMA rail: the pod interface of an attachment and how to find the HCA behind it. HCA
/// names differ from node to node, so `device` is only the last resort of the rail mapping.
struct RdmaRail {
  std::string device;      ///< the HCA where names are fixed, "" when unknown
  std::string interface;   ///< the pod interface of the rail ("net1")
  std::string link_layer;  ///< "ethernet" (RoCE) or "infiniband"
  std::string network;     ///< the NetworkAttachmentDefinition, "" when none
  std::string resource;    ///< the device plugin resource, "" when none
};

/// How a command is started: "" runs it nproc_per_node times as a worker; a launcher runs it
/// once per node with node-level arguments (runtime/BOOT_CONFIG.md "Launchers").
inline constexpr const char* kLaunchers[] = {"torchrun", "deepspeed", "accelerate"};

/// A long-running tool started once per pod (code-server, jupyter, ...).
struct Service {
  std::string name;
  std::vector<std::string> argv;
};

/// Where this node's rank comes from, as the target decided: an environment variable the
/// scheduler sets (JOB_COMPLETION_INDEX, SLURM_NODEID), or the StatefulSet hostname's ordinal.
struct RankSource {
  std::string env;  ///< "" when `hostname_ordinal`
  bool hostname_ordinal = false;
};

/// Rank 0's rendezvous endpoint, as the target decided: a host name, or the environment
/// variable holding it (exactly one is set).
struct Rendezvous {
  std::string host;
  std::string host_env;
  int port = 29400;
};

/// The whole boot.json, with the defaults the format documents for optional keys.
struct BootConfig {
  int format_version = 3;
  std::string job;
  RankSource rank;
  Rendezvous rendezvous;
  int nnodes = 1;
  int nproc_per_node = 1;
  int gpus_per_node = 0;
  int master_port = 29500;
  std::string transport = "tcp";  ///< "rdma" (required), "auto" (RDMA else TCP) or "tcp"
  std::vector<RdmaRail> rails;
  std::optional<int> gid_index;
  std::optional<std::string> gdr_level;
  std::uint64_t min_memlock_bytes = std::uint64_t{1} << 30;
  std::vector<std::string> tcp_interfaces;
  double discovery_s = 600;
  double rendezvous_s = 600;
  double heartbeat_s = 5;
  double grace_s = 30;
  std::vector<std::string> command;
  std::string launcher;  ///< "", "torchrun", "deepspeed" or "accelerate"
  /// How many leading words of `command` name the launcher, wrappers included; 0: absent
  /// (boot.json of an older compiler), the launcher's own words.
  size_t launcher_words = 0;
  std::vector<Service> services;
  std::string hostfile;
  std::string deepspeed_env;
  std::string shell_env;       ///< where login shells find the job's variables, "" for none
  std::string network_status;  ///< the Multus network-status file, "" for none
  int debugpy_port = 0;        ///< where the rank-0 worker's debugpy listens; 0: no debugpy
  double nccl_min_busbw_gbps = 0;
  std::uint64_t nccl_max_bytes = std::uint64_t{128} << 20;
  double nccl_timeout_s = 120;
  bool nccl_diagnose = false;       ///< localise even when the sweep passes
  double nccl_step_timeout_s = 60;  ///< the deadline of each localisation step
};

/// Parses boot.json text; throws BootError(kExitConfigError) naming the offending key.
BootConfig parse_config(std::string_view text);

/// Reads and parses boot.json; throws BootError(kExitConfigError) when unreadable or invalid.
BootConfig load_config(const std::string& path);

/// Parses "30s", "500ms", "2m", "1h" or plain seconds; nothing when malformed, not positive or
/// not finite.
std::optional<double> parse_duration(std::string_view text);

/// The range a duration may take, in seconds (BOOT_CONFIG.md, "Durations").
struct DurationBounds {
  double min;
  bool min_allowed;  ///< whether `min` itself is allowed
  double max;        ///< always allowed
};

/// Discovery and rendezvous deadlines, `--timeout`, `nccl_check.timeout_s`: (0, 7 days].
inline constexpr DurationBounds kDeadlineBounds = {0, false, 7 * 24 * 3600};
/// The heartbeat interval: [0.1 s, 60 s]. Faster beats are lost to scheduling noise and read as a
/// lost peer; slower ones take minutes to notice one.
inline constexpr DurationBounds kHeartbeatBounds = {0.1, true, 60};
/// The SIGTERM-to-SIGKILL grace: [0, 1 h]; 0 kills at once.
inline constexpr DurationBounds kGraceBounds = {0, true, 3600};

/// Why a duration is outside its bounds ("must be ..."), or nothing when it is inside; NaN and
/// infinities are always outside.
std::optional<std::string> check_duration(double seconds, DurationBounds bounds);

}  // namespace boot
