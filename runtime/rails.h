#pragma once
// The HCA behind each rail, found on this node: VF names (mlx5_7 here, mlx5_12 there) differ from
// node to node, so boot.json's `device` is only the last resort (runtime/BOOT_CONFIG.md "Rails").

#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "process_env.h"

namespace boot {

/// Where the HCA of a rail was found.
enum class RailSource { kNone, kSysfsNetdev, kDevicePlugin, kNetworkStatus, kConfig };

/// One rail and the HCA it maps to on this node.
struct RailMapping {
  RdmaRail rail;
  std::string device;  ///< the ibdev ("mlx5_7"), empty when unmapped
  RailSource source = RailSource::kNone;
  std::string detail;  ///< the path, variable or file that gave it, or why nothing did
};

/// `PCIDEVICE_<RESOURCE>`: the variable the SR-IOV network device plugin sets for a resource, the
/// name upper-cased with '.' and '/' replaced by '_' (its pool_stub.go GetEnvs), so
/// `openshift.io/eno5np0rdma` gives PCIDEVICE_OPENSHIFT_IO_ENO5NP0RDMA.
std::string device_plugin_variable(const std::string& resource);

/// The names to look up, first found wins: device_plugin_variable, then the same name with every
/// other non-alphanumeric character ('-') also replaced by '_', as other plugins spell it.
std::vector<std::string> device_plugin_variables(const std::string& resource);

/// The PCI address of an interface in a Multus network-status document, or nothing.
std::optional<std::string> network_status_pci_address(const std::string& network_status_text,
                                                      const std::string& interface);

/// Maps every rail: sysfs netdev, then PCIDEVICE_*, then network-status, then `device`.
/// `network_status_text` is the file's content, nothing when there is none.
std::vector<RailMapping> map_rails(const std::vector<RdmaRail>& rails,
                                   const std::string& sysfs_root, const EnvMap& env,
                                   const std::optional<std::string>& network_status_text);

/// One line for the log: "rail net1 -> mlx5_7 (sysfs: /sys/class/net/net1/device/infiniband)".
std::string describe_mapping(const RailMapping& mapping);

}  // namespace boot
