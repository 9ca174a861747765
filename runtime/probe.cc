#include "probe.h"

#include <sys/resource.h>

#include <algorithm>

#include "util.h"

namespace boot {
namespace {

std::string read_trimmed(const std::string& path) {
  std::optional<std::string> text = read_file(path);
  return text ? std::string(trim(*text)) : std::string();
}

// A GID as sysfs prints it (%pI6: eight groups of four hex digits) as 16 bytes.
std::optional<std::vector<unsigned>> parse_gid(const std::string& text) {
  std::vector<std::string> groups = split(text, ':');
  if (groups.size() != 8) return std::nullopt;
  std::vector<unsigned> words;
  for (const std::string& group : groups) {
    if (group.empty() || group.size() > 4) return std::nullopt;
    unsigned value = 0;
    for (char c : group) {
      value <<= 4;
      if (c >= '0' && c <= '9')
        value |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        value |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        value |= static_cast<unsigned>(c - 'A' + 10);
      else
        return std::nullopt;
    }
    words.push_back(value);
  }
  return words;
}

// Natural order, so mlx5_2 comes before mlx5_10 as people and ibdev2netdev list them.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

int choose_roce_gid(const std::string& port_dir, std::string& netdev) {
  std::vector<std::string> names = list_dir(port_dir + "/gids");
  std::vector<int> indices;
  for (const std::string& name : names) {
    if (std::optional<std::int64_t> index = parse_uint(name); index && *index < 4096) {
      indices.push_back(static_cast<int>(*index));
    }
  }
  std::sort(indices.begin(), indices.end());
  for (int index : indices) {
    std::string i = std::to_string(index);
    std::optional<std::vector<unsigned>> gid = parse_gid(read_trimmed(port_dir + "/gids/" + i));
    if (!gid) continue;
    const std::vector<unsigned>& w = *gid;
    bool zero = std::all_of(w.begin(), w.end(), [](unsigned x) { return x == 0; });
    bool link_local = w[0] == 0xfe80 && w[1] == 0 && w[2] == 0 && w[3] == 0;
    bool ipv4_mapped =
        w[0] == 0 && w[1] == 0 && w[2] == 0 && w[3] == 0 && w[4] == 0 && w[5] == 0xffff;
    if (zero || link_local || !ipv4_mapped) continue;
    // In a container, GIDs of other network namespaces fail to read (EINVAL): skip, as NCCL does.
    std::optional<std::string> type = read_file(port_dir + "/gid_attrs/types/" + i);
    if (!type || trim(*type) != "RoCE v2") continue;
    std::optional<std::string> ndev = read_file(port_dir + "/gid_attrs/ndevs/" + i);
    if (!ndev || trim(*ndev).empty()) continue;
    netdev = std::string(trim(*ndev));
    return index;
  }
  return -1;
}

std::vector<RdmaPort> probe_rdma_ports(const ProbeRoots& roots,
                                       const std::vector<std::string>& devices,
                                       std::vector<std::string>& warnings) {
  std::string base = roots.sysfs + "/class/infiniband";
  std::vector<std::string> present = list_dir(base);
  std::vector<std::string> wanted = devices;
  if (wanted.empty()) {
    wanted = present;
    std::sort(wanted.begin(), wanted.end(), natural_less);
  }
  std::vector<RdmaPort> ports;
  for (const std::string& device : wanted) {
    // Exact names only: NCCL's own prefix match would let mlx5_1 select mlx5_10.
    if (std::find(present.begin(), present.end(), device) == present.end()) {
      warnings.push_back("RDMA device " + device + " from boot.json is not present");
      RdmaPort missing;
      missing.device = device;
      missing.why_not = "device not present";
      ports.push_back(missing);
      continue;
    }
    std::string device_dir = base + "/" + device;
    bool vf = path_exists(device_dir + "/device/physfn");
    std::vector<std::string> device_netdevs = list_dir(device_dir + "/device/net");
    std::vector<std::string> port_names = list_dir(device_dir + "/ports");
    std::sort(port_names.begin(), port_names.end(), natural_less);
    for (const std::string& port_name : port_names) {
      std::optional<std::int64_t> number = parse_uint(port_name);
      if (!number) continue;
      std::string port_dir = device_dir + "/ports/" + port_name;
      RdmaPort port;
      port.device = device;
      port.port = static_cast<int>(*number);
      port.virtual_function = vf;
      port.state = read_trimmed(port_dir + "/state");
      port.link_layer = read_trimmed(port_dir + "/link_layer");
      if (!device_netdevs.empty()) port.netdev = device_netdevs.front();
      if (!port.state.starts_with("4:")) {
        port.why_not = "port state is \"" + port.state + "\", not \"4: ACTIVE\"";
      } else if (port.link_layer == "InfiniBand") {
        port.gid_index = 0;
        port.usable = true;
      } else if (port.link_layer == "Ethernet") {
        std::string netdev;
        port.gid_index = choose_roce_gid(port_dir, netdev);
        if (port.gid_index >= 0) {
          port.netdev = netdev;
          port.usable = true;
        } else {
          port.why_not = "no IPv4 RoCE v2 GID with a readable netdev";
          warnings.push_back(device + " port " + port_name +
                             ": no IPv4 RoCE v2 GID (IPv6-only or link-local GIDs cannot be used "
                             "with NCCL's default address family)");
        }
      } else {
        port.why_not = "link layer is \"" + port.link_layer + "\"";
      }
      ports.push_back(port);
    }
    if (port_names.empty()) {
      RdmaPort none;
      none.device = device;
      none.virtual_function = vf;
      none.why_not = "no ports";
      ports.push_back(none);
    }
  }
  return ports;
}

std::optional<bool> read_ipc_lock(const std::string& proc_root) {
  std::optional<std::string> status = read_file(proc_root + "/self/status");
  if (!status) return std::nullopt;
  for (const std::string& line : split(*status, '\n')) {
    if (!line.starts_with("CapEff:")) continue;
    std::string hex(trim(std::string_view(line).substr(7)));
    if (hex.empty() || hex.size() > 16) return std::nullopt;
    std::uint64_t value = 0;
    for (char c : hex) {
      value <<= 4;
      if (c >= '0' && c <= '9')
        value |= static_cast<std::uint64_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        value |= static_cast<std::uint64_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        value |= static_cast<std::uint64_t>(c - 'A' + 10);
      else
        return std::nullopt;
    }
    constexpr std::uint64_t kCapIpcLock = std::uint64_t{1} << 14;
    return (value & kCapIpcLock) != 0;
  }
  return std::nullopt;
}

MemlockState raise_memlock() {
  MemlockState state;
  rlimit limit = {};
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return state;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_MEMLOCK, &raised) == 0) {
      limit = raised;
      state.raised = true;
    }
  }
  state.soft_unlimited = limit.rlim_cur == RLIM_INFINITY;
  state.soft_bytes = state.soft_unlimited ? 0 : limit.rlim_cur;
  state.hard_unlimited = limit.rlim_max == RLIM_INFINITY;
  state.hard_bytes = state.hard_unlimited ? 0 : limit.rlim_max;
  return state;
}

bool memlock_sufficient(const std::optional<bool>& ipc_lock, const MemlockState& memlock,
                        std::uint64_t floor, std::string& why_not) {
  // Without CAP_IPC_LOCK the kernel refuses to pin past RLIMIT_MEMLOCK (ib_umem_get).
  if (ipc_lock.value_or(false)) return true;
  if (memlock.soft_unlimited || memlock.soft_bytes >= floor) return true;
  why_not = "memlock limit is " + std::to_string(memlock.soft_bytes / 1024) +
            " KiB and CAP_IPC_LOCK is not effective (need unlimited memlock or IPC_LOCK)";
  return false;
}

ProbeResult probe_node(const ProbeOptions& options) {
  ProbeResult probe;
  if (!options.rails_configured || !options.devices.empty()) {
    probe.ports = probe_rdma_ports(options.roots, options.devices, probe.warnings);
  }
  for (const std::string& why : options.unmapped_why) {
    RdmaPort unmapped;
    unmapped.why_not = why;
    probe.ports.push_back(unmapped);
    probe.warnings.push_back(why);
  }
  for (const std::string& name : list_dir(options.roots.dev + "/infiniband")) {
    if (name.starts_with("uverbs")) probe.uverbs = true;
  }
  for (const char* marker :
       {"/kernel/mm/memory_peers/nv_mem/version", "/kernel/mm/memory_peers/nv_mem_nc/version",
        "/module/nvidia_peermem/version"}) {
    if (path_exists(options.roots.sysfs + marker)) probe.gpudirect = true;
  }
  probe.ipc_lock = read_ipc_lock(options.roots.proc);
  probe.memlock = raise_memlock();
  probe.gpu_count = static_cast<int>(list_dir(options.roots.proc + "/driver/nvidia/gpus").size());

  std::vector<std::string> usable;
  for (const RdmaPort& port : probe.ports) {
    if (port.usable) usable.push_back(port.device + ":" + std::to_string(port.port));
  }
  std::string why_not;
  if (probe.ports.empty()) {
    probe.rdma_detail = "no RDMA device";
  } else if (usable.empty()) {
    const RdmaPort& first = probe.ports.front();
    probe.rdma_detail = "no usable RDMA port (" +
                        (first.device.empty() ? "" : first.device + ": ") + first.why_not + ")";
  } else if (!probe.uverbs) {
    probe.rdma_detail = options.roots.dev + "/infiniband/uverbs* is missing in the container";
  } else if (!memlock_sufficient(probe.ipc_lock, probe.memlock, options.min_memlock_bytes,
                                 why_not)) {
    probe.rdma_detail = why_not;
  } else {
    probe.rdma_usable = true;
    probe.rdma_detail = "usable ports " + join(usable, ",");
  }
  if (probe.rdma_usable && !probe.gpudirect) {
    probe.warnings.push_back(
        "no GPUDirect peer-memory module (nvidia_peermem) is loaded; NCCL needs DMA-BUF or "
        "GPUDirect RDMA falls back to host memory, about 10x slower");
  }
  return probe;
}

Json probe_to_json(const ProbeResult& probe) {
  Json ports = Json::array();
  for (const RdmaPort& port : probe.ports) {
    Json entry = Json::object();
    entry.set("device", port.device)
        .set("port", port.port)
        .set("state", port.state)
        .set("link_layer", port.link_layer)
        .set("netdev", port.netdev)
        .set("gid_index", port.gid_index)
        .set("virtual_function", port.virtual_function)
        .set("usable", port.usable);
    if (!port.usable) entry.set("why_not", port.why_not);
    ports.push(std::move(entry));
  }
  Json memlock = Json::object();
  memlock
      .set("soft", probe.memlock.soft_unlimited
                       ? Json("unlimited")
                       : Json(static_cast<std::int64_t>(probe.memlock.soft_bytes)))
      .set("raised", probe.memlock.raised);
  Json out = Json::object();
  out.set("rdma_usable", probe.rdma_usable)
      .set("rdma_detail", probe.rdma_detail)
      .set("ports", std::move(ports))
      .set("uverbs", probe.uverbs)
      .set("gpudirect", probe.gpudirect)
      .set("ipc_lock", probe.ipc_lock ? Json(*probe.ipc_lock) : Json())
      .set("memlock", std::move(memlock))
      .set("gpu_count", probe.gpu_count);
  return out;
}

}  // namespace boot
