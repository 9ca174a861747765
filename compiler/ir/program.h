#pragma once
// The typed program: what the checker produces and every target consumes. All references are
// resolved, every `extends` is merged, defaults are filled in and the rules of the language
// have passed. A target never sees the AST.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/base/source.h"

namespace mlenv::ir {

/// A Kubernetes quantity in canonical text form ("100Gi", "500m", "16").
struct Quantity {
  std::string text;
  friend bool operator==(const Quantity&, const Quantity&) = default;
};

enum class StorageMode { rwx, per_pod };
enum class StorageAccess { rwx, rwo };
enum class Transport { rdma, tcp };
enum class LinkLayer { ethernet, infiniband };
/// Who provides a rail's NetworkAttachmentDefinition: mlenvc (SR-IOV) or the cluster.
enum class Attachment { sriov, existing };
/// A dev env stays up (StatefulSet); a run and an acceptance run finish (Indexed Job).
enum class EnvKind { dev, run, acceptance };
enum class Service { vscode, jupyter, tensorboard };
enum class Auth { oauth_proxy, none };
/// What runs a cluster's envs; each has its provider (targets/provider.h), listed once in
/// targets/registry.cc. `local` is the last.
enum class Platform { openshift, kubernetes, slurm, local };

/// The name of a platform as written in programs and plan.json ("openshift").
constexpr const char* platform_name(Platform platform) {
  switch (platform) {
    case Platform::kubernetes:
      return "kubernetes";
    case Platform::slurm:
      return "slurm";
    case Platform::local:
      return "local";
    case Platform::openshift:
      break;
  }
  return "openshift";
}

/// The platform spelled `name` (platform_name), or nullopt: programs and plan.json are read
/// through this once, and everything after compares the enum.
inline std::optional<Platform> parse_platform(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Platform::local); ++i) {
    if (name == platform_name(static_cast<Platform>(i))) return static_cast<Platform>(i);
  }
  return std::nullopt;
}

/// The CNI IPAM of an SR-IOV rail's attachment.
struct Ipam {
  std::string type;                  ///< "whereabouts" or "dhcp"
  std::string range;                 ///< CIDR, whereabouts only
  std::vector<std::string> exclude;  ///< addresses or CIDRs within `range`
  bool operator==(const Ipam&) const = default;
};

/// One RDMA rail: the pod interface it carries, its link layer, and the attachment and
/// device-plugin resource that give the pod its device (both set on OpenShift).
struct Rail {
  std::string device;     ///< "mlx5_2"; "" when only the attachment says
  std::string interface;  ///< "net1"
  LinkLayer link_layer = LinkLayer::ethernet;
  std::string network;   ///< NetworkAttachmentDefinition name, "" when none
  std::string resource;  ///< "openshift.io/eno5np0rdma", "" when none
  Attachment attachment = Attachment::sriov;
  std::optional<Ipam> ipam;  ///< unset: the attachment gives the interface no address
  bool operator==(const Rail&) const = default;
};

struct Rdma {
  std::vector<Rail> rails;
  std::optional<int> gid_index;          ///< 0..255
  std::optional<std::string> gdr_level;  ///< LOC, PIX, PXB, PHB or SYS
};

struct Network {
  std::optional<Rdma> rdma;                 ///< absent: the cluster has no RDMA
  std::vector<std::string> tcp_interfaces;  ///< NCCL_SOCKET_IFNAME candidates; empty: any
};

struct Gpus {
  int per_node = 0;
  std::string resource = "nvidia.com/gpu";
  std::string product;  ///< "NVIDIA-H100-80GB-HBM3", "" when unknown
};

struct Storage {
  StorageMode mode = StorageMode::rwx;
  std::string class_name;
  Quantity workspace;
  Quantity datasets;
  std::string workspace_claim;  ///< an existing claim mounted at /workspace, "" for a new one
  std::string datasets_claim;   ///< an existing claim mounted at /datasets, "" for a new one
  /// The env's own `storage` block: its new claims are its own, named after it. Otherwise they
  /// are its cluster's, named after the cluster and shared by the cluster's envs.
  bool own = false;
};

struct Security {
  std::string service_account;     ///< "" means the compiler names one (`<env>-sa`)
  std::string scc;                 ///< the admission policy the cluster names; "" for mlenvc's own
  bool unlimited_memlock = false;  ///< the runtime grants unlimited memlock: no IPC_LOCK needed
};

/// Where a batch cluster runs jobs (its scheduler's options); "" where unset.
struct Slurm {
  std::string partition;
  std::string account;
  std::string qos;
  std::string time;           ///< a Slurm time limit ("04:00:00", "1-00:00:00")
  std::string workspace_dir;  ///< host directory mounted at /workspace in containers, "" none
  std::string datasets_dir;   ///< host directory mounted at /datasets in containers, "" none
};

struct Cluster {
  std::string name;
  Platform platform = Platform::openshift;
  std::string api;
  std::string namespace_name;      ///< "" on Slurm
  std::vector<std::string> nodes;  ///< pinned node hostnames; empty: any node
  Gpus gpus;
  Storage storage;
  std::map<std::string, StorageAccess> classes;  ///< empty: unknown
  Network network;
  Security security;
  std::string topology;  ///< the scheduler's required topology level (a node label), "" for none
  bool require_queue = false;  ///< every env must name the scheduler's queue (Kubernetes)
  Slurm slurm;
  /// local: `podman`, `docker` or `host` for an env with an image; "" the first found on PATH.
  std::string runtime;
  SourceRange range;  ///< the declaration
};

struct Image {
  std::string name;         ///< the image's name
  std::string from;         ///< pinned base image reference
  std::string tag;          ///< the image's tag
  std::string registry;     ///< where the built image is pushed (Kubernetes, Slurm), "" for none
  std::string pull_secret;  ///< the Secret pods pull `registry` with (Kubernetes), "" for none
  std::vector<std::string> apt;
  std::vector<std::string> pip;
  std::vector<std::string> tools;  ///< "code-server", "jupyter", "debugpy", "tensorboard"
  std::vector<std::pair<std::string, std::string>> env;  ///< in source order
  std::vector<std::string> run;                          ///< extra Dockerfile RUN steps
  SourceRange range;
  SourceRange from_range;  ///< the `from` value, for the pinned-image rule
};

struct Resources {
  Quantity cpu;
  Quantity memory;
  Quantity shm;  ///< size of the /dev/shm memory emptyDir
  /// `cpu` in whole CPUs, rounded up (Slurm's --cpus-per-task); 0 when not set.
  std::int64_t whole_cpus = 0;
  /// `memory` in MiB, rounded up (Slurm's --mem); 0 when not set.
  std::int64_t memory_mib = 0;
};

/// The NCCL acceptance test of an acceptance run.
struct Acceptance {
  int min_busbw_gbps = 0;
  std::int64_t max_bytes = std::int64_t{1} << 30;
  bool diagnose = false;  ///< localise even when the sweep passes
};

/// One deployable environment: everything a target needs to emit its objects.
struct Env {
  std::string name;
  EnvKind kind = EnvKind::dev;
  Cluster cluster;         ///< the merged cluster this env runs on
  Image image;             ///< the merged image it runs (empty when `on_host`)
  bool on_host = false;    ///< no image: a Slurm job runs mlenv-boot on the host
  int nodes = 1;           ///< pods (one per node)
  int gpus = 0;            ///< GPUs per pod
  int nproc_per_node = 0;  ///< workers per pod (defaults to gpus, at least 1)
  Transport transport = Transport::tcp;
  /// `network = auto` chose RDMA: mlenv-boot may still fall back to TCP when a node cannot use
  /// it (and says so); with `network = rdma` it fails the job instead.
  bool transport_auto = false;
  std::string transport_note;     ///< why the transport was chosen when `auto` fell back
  std::vector<Service> services;  ///< exposed through Routes behind the oauth-proxy
  Auth auth = Auth::oauth_proxy;
  bool debug = false;                ///< debugpy on 5678, never routed
  std::vector<std::string> command;  ///< empty: a dev env (services only) or acceptance run
  /// "torchrun", "deepspeed" or "accelerate" when `command` is a launcher started once per
  /// node; "" when it is the per-worker program.
  std::string launcher;
  /// How many leading words of `command` name the launcher, wrappers included (`uv run
  /// torchrun` is 3): mlenv-boot inserts the node arguments after them. 0 without a launcher.
  std::size_t launcher_words = 0;
  Acceptance acceptance;                    ///< kind == acceptance
  int restarts = 0;                         ///< gang restarts of a run before it fails
  std::optional<std::int64_t> ttl_seconds;  ///< a finished run is deleted after this
  Resources resources;
  Storage storage;      ///< the cluster's storage with the env's overrides applied
  bool protect = true;  ///< PVCs are never pruned without --allow-destroy
  std::map<std::string, std::string> labels;
  int master_port = 29500;
  int rdzv_port = 29400;
  std::string queue;           ///< the scheduler's queue the env waits in, "" for none
  std::string priority;        ///< the scheduler's priority class, "" for none
  SourceRange range;           ///< the declaration
  SourceRange services_range;  ///< the `services` value, or the declaration
  /// Where `master_port` and `rdzv_port` were set, or the declaration where they are defaults:
  /// a port clash is reported on the user's line.
  SourceRange master_port_range, rdzv_port_range;

  /// Where `rdzv_port` equal to `master_port` is reported: on the port the user set, since
  /// the other is then the schema's default (`master_port = 29400` meets `rdzv_port`'s);
  /// `rdzv_port` where the user set both or neither. Its field name, and the range.
  std::pair<const char*, SourceRange> port_clash_at() const {
    const bool only_master = rdzv_port_range == range && master_port_range != range;
    return only_master ? std::pair{"master_port", master_port_range}
                       : std::pair{"rdzv_port", rdzv_port_range};
  }
};

/// A source file the program was compiled from (stdlib and schema files included).
struct InputFile {
  std::string path;  ///< as given on the command line, `std/...` / `schema/...` when embedded,
                     ///< or `git::URL//PATH?ref=REF` for a file of a git source
  std::string text;
  std::string commit = {};  ///< a git source's file: the commit it was read at
};

struct Program {
  std::string source;             ///< the root file as given to the compiler (plan.json `source`)
  std::vector<Env> envs;          ///< in source order of the root file
  std::vector<InputFile> inputs;  ///< every file read, for the plan's input digests
};

}  // namespace mlenv::ir
