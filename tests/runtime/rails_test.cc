#include <catch2/catch.hpp>

#include "harness.h"
#include "rails.h"

using boot::RailMapping;
using boot::RailSource;
using boot::RdmaRail;
using boot_test::BootProcess;
using boot_test::TempDir;

namespace {

// A VF as sysfs shows it: the PCI function with its ibdev under infiniband/, and, when the pod's
// network namespace holds its netdev, /sys/class/net/<netdev>/device linking to that function
// (Linux Documentation/ABI/testing/sysfs-class-net, sysfs-class-infiniband).
void vf(const TempDir& dir, const std::string& root, const std::string& pci,
        const std::string& ibdev, const std::string& netdev = "") {
  dir.mkdir(root + "/sys/bus/pci/devices/" + pci + "/infiniband/" + ibdev);
  if (!netdev.empty()) {
    dir.symlink(root + "/sys/class/net/" + netdev + "/device", "../../../bus/pci/devices/" + pci);
  }
}

RdmaRail rail(const std::string& interface, const std::string& resource = "",
              const std::string& device = "") {
  RdmaRail out;
  out.interface = interface;
  out.resource = resource;
  out.device = device;
  out.link_layer = "ethernet";
  return out;
}

// The Multus annotation k8s.v1.cni.cncf.io/network-status as the downward API mounts it; the
// shape is k8snetworkplumbingwg multi-net-spec ("network-status") with its device-info
// specification (`device-info.pci.pci-address`).
const char* kNetworkStatus = R"([
  {"name": "ovn-kubernetes", "interface": "eth0", "ips": ["10.128.2.15"], "default": true},
  {"name": "nccl-test/eno5np0-network", "interface": "net1", "ips": ["10.0.103.7"],
   "device-info": {"type": "pci", "version": "1.1.0", "pci": {"pci-address": "0000:3b:02.4"}}}
])";

}  // namespace

TEST_CASE("rails: the interface's own PCI device in sysfs names the HCA", "[rails]") {
  TempDir dir;
  vf(dir, "n", "0000:3b:02.1", "mlx5_7", "net1");
  // boot.json's device is a stale name from another node; sysfs wins.
  std::vector<RailMapping> mapped =
      boot::map_rails({rail("net1", "", "mlx5_2")}, dir.path() + "/n/sys", {}, std::nullopt);
  REQUIRE(mapped.size() == 1);
  CHECK(mapped[0].device == "mlx5_7");
  CHECK(mapped[0].source == RailSource::kSysfsNetdev);
  CHECK(boot::describe_mapping(mapped[0]).find("rail net1 -> mlx5_7 (sysfs: ") == 0);
}

TEST_CASE("rails: the device plugin's PCIDEVICE variable, k-th rail of a resource k-th address",
          "[rails]") {
  // sriov-network-device-plugin pkg/resources/pool_stub.go GetEnvs: PCIDEVICE_<prefix>_<name>,
  // upper-cased, '.' replaced by '_', the allocated PCI addresses joined by ','.
  CHECK(boot::device_plugin_variable("openshift.io/eno5np0rdma") ==
        "PCIDEVICE_OPENSHIFT_IO_ENO5NP0RDMA");
  CHECK(boot::device_plugin_variables("nvidia.com/rdma-a") ==
        std::vector<std::string>{"PCIDEVICE_NVIDIA_COM_RDMA-A", "PCIDEVICE_NVIDIA_COM_RDMA_A"});
  TempDir dir;
  vf(dir, "n", "0000:3b:02.1", "mlx5_4");  // no netdev in this namespace: sysfs cannot tell
  vf(dir, "n", "0000:3b:02.2", "mlx5_9");
  boot::EnvMap env = {{"PCIDEVICE_OPENSHIFT_IO_ENO5NP0RDMA", "0000:3b:02.1,0000:3b:02.2"}};
  std::vector<RailMapping> mapped = boot::map_rails(
      {rail("net1", "openshift.io/eno5np0rdma"), rail("net2", "openshift.io/eno5np0rdma")},
      dir.path() + "/n/sys", env, std::nullopt);
  REQUIRE(mapped.size() == 2);
  CHECK(mapped[0].device == "mlx5_4");
  CHECK(mapped[1].device == "mlx5_9");
  CHECK(mapped[1].source == RailSource::kDevicePlugin);
  CHECK(mapped[1].detail == "PCIDEVICE_OPENSHIFT_IO_ENO5NP0RDMA=0000:3b:02.2");

  // A plugin spelling '-' as '_' is found too.
  boot::EnvMap dashed = {{"PCIDEVICE_NVIDIA_COM_RDMA_A", "0000:3b:02.2"}};
  CHECK(boot::map_rails({rail("net1", "nvidia.com/rdma-a")}, dir.path() + "/n/sys", dashed,
                        std::nullopt)[0]
            .device == "mlx5_9");
}

TEST_CASE("rails: Multus network-status gives the PCI address of the interface", "[rails]") {
  CHECK(boot::network_status_pci_address(kNetworkStatus, "net1") == "0000:3b:02.4");
  CHECK_FALSE(boot::network_status_pci_address(kNetworkStatus, "eth0"));
  CHECK_FALSE(boot::network_status_pci_address("", "net1"));  // mounted but empty
  TempDir dir;
  vf(dir, "n", "0000:3b:02.4", "mlx5_11");
  std::vector<RailMapping> mapped = boot::map_rails({rail("net1", "openshift.io/eno5np0rdma")},
                                                    dir.path() + "/n/sys", {}, kNetworkStatus);
  REQUIRE(mapped.size() == 1);
  CHECK(mapped[0].device == "mlx5_11");
  CHECK(mapped[0].source == RailSource::kNetworkStatus);
}

TEST_CASE("rails: boot.json's device is the last resort, and nothing at all is a reason",
          "[rails]") {
  TempDir dir;
  dir.mkdir("n/sys");
  std::vector<RailMapping> mapped =
      boot::map_rails({rail("net1", "openshift.io/x", "mlx5_2"), rail("net2", "openshift.io/x")},
                      dir.path() + "/n/sys", {}, std::nullopt);
  REQUIRE(mapped.size() == 2);
  CHECK(mapped[0].device == "mlx5_2");
  CHECK(mapped[0].source == RailSource::kConfig);
  CHECK(mapped[1].device.empty());
  CHECK(mapped[1].source == RailSource::kNone);
  CHECK(mapped[1].detail == "no RDMA device attached to net2");
}

TEST_CASE("rails: two nodes whose VF names differ each export their own HCA", "[rails]") {
  TempDir dir;
  // Each node: a RoCE VF with the mlx5 GID layout (IPv4 RoCE v2 at index 3), uverbs, IPC_LOCK.
  auto node = [&](const std::string& root, const std::string& ibdev) {
    vf(dir, root, "0000:3b:02.1", ibdev, "net1");
    std::string port = root + "/sys/class/infiniband/" + ibdev + "/ports/1/";
    dir.write(port + "state", "4: ACTIVE\n");
    dir.write(port + "link_layer", "Ethernet\n");
    const char* gids[] = {
        "fe80:0000:0000:0000:0a88:66ff:fe11:2233", "fe80:0000:0000:0000:0a88:66ff:fe11:2233",
        "0000:0000:0000:0000:0000:ffff:0a00:0107", "0000:0000:0000:0000:0000:ffff:0a00:0107"};
    const char* types[] = {"IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2"};
    for (int i = 0; i < 4; ++i) {
      dir.write(port + "gids/" + std::to_string(i), std::string(gids[i]) + "\n");
      dir.write(port + "gid_attrs/types/" + std::to_string(i), std::string(types[i]) + "\n");
      dir.write(port + "gid_attrs/ndevs/" + std::to_string(i), "net1\n");
    }
    dir.write(root + "/dev/infiniband/uverbs0", "");
    dir.write(root + "/proc/self/status", "CapEff:\t00000000a80445fb\n");
  };
  node("a", "mlx5_3");
  node("b", "mlx5_7");
  boot::Json rails = boot::Json::array();
  boot::Json net1 = boot::Json::object();
  net1.set("device", "mlx5_2").set("interface", "net1").set("link_layer", "ethernet");
  rails.push(net1);
  boot::Json rdma = boot::Json::object();
  rdma.set("rails", rails);
  boot::Json overrides = boot::Json::object();
  overrides.set("transport", "rdma").set("rdma", rdma);
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  int port = boot_test::free_port();
  std::vector<BootProcess> nodes;
  for (int rank = 0; rank < 2; ++rank) {
    std::string root = dir.path() + "/" + (rank == 0 ? "a" : "b");
    nodes.push_back(boot_test::start_boot(
        dir, "n" + std::to_string(rank),
        {"--config", config, "--rdzv", "127.0.0.1:" + std::to_string(port), "--node-rank",
         std::to_string(rank), "--dry-run", "--sysfs-root", root + "/sys", "--proc-root",
         root + "/proc", "--dev-root", root + "/dev"}));
  }
  const char* expected[] = {"mlx5_3", "mlx5_7"};
  for (int rank = 0; rank < 2; ++rank) {
    BootProcess& process = nodes[static_cast<size_t>(rank)];
    REQUIRE(boot_test::wait_exit(process, 15));
    INFO("rank " << rank << ": " << process.err());
    REQUIRE(process.exit_code == 0);
    boot::Json plan = *boot::parse_json(process.out()).value;
    std::string hca = expected[rank];
    CHECK(plan.find("transport")->as_string() == "rdma");
    const boot::Json& env = *plan.find("environment");
    CHECK(env.find("NCCL_IB_HCA")->as_string() == "=" + hca + ":1");
    // NCCL >= 2.21 picks the GID itself; the probe still reports the one it found.
    CHECK(env.find("NCCL_IB_GID_INDEX") == nullptr);
    const boot::Json& probed = plan.find("probe")->find("ports")->as_array()[0];
    CHECK(probed.find("device")->as_string() == hca);
    CHECK(probed.find("gid_index")->as_int() == 3);
    CHECK(process.err().find("rail net1 -> " + hca + " (sysfs: ") != std::string::npos);
  }
}
