#include "rails.h"

#include <cctype>
#include <map>

#include "json.h"
#include "util.h"

namespace boot {
namespace {

// The first ibdev under a device's infiniband/ folder (one per PCI function).
std::string ibdev_in(const std::string& folder) {
  std::vector<std::string> names = list_dir(folder);
  return names.empty() ? std::string() : names.front();
}

// The PCI addresses a device plugin resource handed this pod, in its order, and the variable.
std::vector<std::string> device_plugin_addresses(const EnvMap& env, const std::string& resource,
                                                 std::string& variable) {
  std::vector<std::string> out;
  if (resource.empty()) return out;
  for (const std::string& name : device_plugin_variables(resource)) {
    std::optional<std::string> value = lookup(env, name);
    if (!value) continue;
    variable = name;
    for (const std::string& piece : split(*value, ',')) {
      std::string address(trim(piece));
      if (!address.empty()) out.push_back(address);
    }
    break;
  }
  return out;
}

}  // namespace

std::string device_plugin_variable(const std::string& resource) {
  std::string name = "PCIDEVICE_";
  for (char c : resource) {
    unsigned char byte = static_cast<unsigned char>(c);
    name += c == '.' || c == '/' ? '_' : static_cast<char>(std::toupper(byte));
  }
  return name;
}

std::vector<std::string> device_plugin_variables(const std::string& resource) {
  std::string exact = device_plugin_variable(resource);
  std::string normalized = exact;
  for (char& c : normalized) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  if (normalized == exact) return {exact};
  return {exact, normalized};
}

std::optional<std::string> network_status_pci_address(const std::string& network_status_text,
                                                      const std::string& interface) {
  JsonParseResult parsed = parse_json(network_status_text);
  if (!parsed.value || !parsed.value->is_array()) return std::nullopt;
  for (const Json& network : parsed.value->as_array()) {
    const Json* name = network.find("interface");
    if (!name || !name->is_string() || name->as_string() != interface) continue;
    const Json* info = network.find("device-info");
    const Json* pci = info ? info->find("pci") : nullptr;
    const Json* address = pci ? pci->find("pci-address") : nullptr;
    if (address && address->is_string() && !address->as_string().empty()) {
      return address->as_string();
    }
  }
  return std::nullopt;
}

namespace {

// One rail, `nth` of those naming its resource: the first source that names an HCA wins.
RailMapping map_rail(const RdmaRail& rail, size_t nth, const std::string& sysfs_root,
                     const EnvMap& env, const std::optional<std::string>& network_status_text) {
  auto ibdev_of_pci = [&](const std::string& address) {
    return ibdev_in(sysfs_root + "/bus/pci/devices/" + address + "/infiniband");
  };
  if (!rail.interface.empty()) {
    std::string folder = sysfs_root + "/class/net/" + rail.interface + "/device/infiniband";
    if (std::string device = ibdev_in(folder); !device.empty()) {
      return {rail, device, RailSource::kSysfsNetdev, folder};
    }
  }
  std::string variable;
  std::vector<std::string> addresses = device_plugin_addresses(env, rail.resource, variable);
  if (nth < addresses.size()) {
    if (std::string device = ibdev_of_pci(addresses[nth]); !device.empty()) {
      return {rail, device, RailSource::kDevicePlugin, variable + "=" + addresses[nth]};
    }
  }
  if (network_status_text && !rail.interface.empty()) {
    std::optional<std::string> address =
        network_status_pci_address(*network_status_text, rail.interface);
    if (std::string device = address ? ibdev_of_pci(*address) : ""; !device.empty()) {
      return {rail, device, RailSource::kNetworkStatus, "network-status " + *address};
    }
  }
  if (!rail.device.empty()) {
    return {rail, rail.device, RailSource::kConfig, "boot.json rdma.rails[].device"};
  }
  return {rail, "", RailSource::kNone, "no RDMA device attached to " + rail.interface};
}

}  // namespace

std::vector<RailMapping> map_rails(const std::vector<RdmaRail>& rails,
                                   const std::string& sysfs_root, const EnvMap& env,
                                   const std::optional<std::string>& network_status_text) {
  std::vector<RailMapping> out;
  std::map<std::string, size_t> taken_per_resource;  // the k-th rail of a resource: address k
  for (const RdmaRail& rail : rails) {
    size_t nth = rail.resource.empty() ? 0 : taken_per_resource[rail.resource]++;
    out.push_back(map_rail(rail, nth, sysfs_root, env, network_status_text));
  }
  return out;
}

std::string describe_mapping(const RailMapping& mapping) {
  std::string rail =
      "rail " + (mapping.rail.interface.empty() ? mapping.rail.device : mapping.rail.interface);
  switch (mapping.source) {
    case RailSource::kNone:
      return rail + ": not mapped (" + mapping.detail + ")";
    case RailSource::kSysfsNetdev:
      return rail + " -> " + mapping.device + " (sysfs: " + mapping.detail + ")";
    case RailSource::kDevicePlugin:
      return rail + " -> " + mapping.device + " (device plugin: " + mapping.detail + ")";
    case RailSource::kNetworkStatus:
      return rail + " -> " + mapping.device + " (" + mapping.detail + ")";
    case RailSource::kConfig:
      return rail + " -> " + mapping.device + " (boot.json device)";
  }
  return rail;
}

}  // namespace boot
