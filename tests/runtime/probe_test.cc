#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "harness.h"
#include "probe.h"

using boot::ProbeOptions;
using boot::ProbeResult;
using boot_test::TempDir;

namespace {

// One GID table entry of a fixture port; ndev "!" makes the ndevs file unreadable (a dangling
// link, as when the GID belongs to another network namespace).
struct Gid {
  std::string gid;
  std::string type;
  std::string ndev;
};

const char* kLinkLocal = "fe80:0000:0000:0000:0a88:66ff:fe11:2233";
const char* kIpv4 = "0000:0000:0000:0000:0000:ffff:0a00:0107";  // ::ffff:10.0.1.7
const char* kUla = "fd00:0000:0000:0001:0a88:66ff:fe11:2233";

// A synthetic /sys, /proc and /dev under one temporary directory.
class Fixture {
 public:
  Fixture() { capabilities(true); }

  void port(const std::string& device, int port, const std::string& state,
            const std::string& link_layer, const std::vector<Gid>& gids = {}) {
    std::string base = "sys/class/infiniband/" + device + "/ports/" + std::to_string(port);
    dir.write(base + "/state", state + "\n");
    dir.write(base + "/link_layer", link_layer + "\n");
    for (size_t i = 0; i < gids.size(); ++i) {
      std::string index = std::to_string(i);
      dir.write(base + "/gids/" + index, gids[i].gid + "\n");
      dir.write(base + "/gid_attrs/types/" + index, gids[i].type + "\n");
      if (gids[i].ndev == "!") {
        dir.symlink(base + "/gid_attrs/ndevs/" + index, "/nonexistent/ndev");
      } else if (!gids[i].ndev.empty()) {
        dir.write(base + "/gid_attrs/ndevs/" + index, gids[i].ndev + "\n");
      }
    }
    dir.write("dev/infiniband/uverbs0", "");
  }

  void mlx5_roce(const std::string& device, const std::string& netdev) {
    port(device, 1, "4: ACTIVE", "Ethernet",
         {{kLinkLocal, "IB/RoCE v1", netdev},
          {kLinkLocal, "RoCE v2", netdev},
          {kIpv4, "IB/RoCE v1", netdev},
          {kIpv4, "RoCE v2", netdev}});
  }

  void capabilities(bool ipc_lock) {
    dir.write("proc/self/status", std::string("Name:\tmlenv-boot\nCapInh:\t0000000000000000\n") +
                                      "CapEff:\t" +
                                      (ipc_lock ? "00000000a80445fb" : "00000000a80405fb") +
                                      "\nCapBnd:\t00000000a80425fb\n");
  }

  ProbeOptions options(std::vector<std::string> devices = {}) const {
    ProbeOptions options;
    options.roots = {dir.path() + "/sys", dir.path() + "/proc", dir.path() + "/dev"};
    options.devices = std::move(devices);
    return options;
  }

  ProbeResult probe(std::vector<std::string> devices = {}) const {
    return boot::probe_node(options(std::move(devices)));
  }

  TempDir dir;
};

}  // namespace

TEST_CASE("probe: no InfiniBand at all means no RDMA", "[probe]") {
  Fixture fixture;
  ProbeResult probe = fixture.probe();
  CHECK(probe.ports.empty());
  CHECK_FALSE(probe.rdma_usable);
  CHECK(probe.rdma_detail == "no RDMA device");
  CHECK_FALSE(probe.uverbs);
}

TEST_CASE("probe: an active InfiniBand port uses GID 0", "[probe]") {
  Fixture fixture;
  fixture.port("mlx5_0", 1, "4: ACTIVE", "InfiniBand");
  fixture.dir.write("sys/class/infiniband/mlx5_0/device/net/ib0/ifindex", "5\n");
  ProbeResult probe = fixture.probe();
  REQUIRE(probe.ports.size() == 1);
  CHECK(probe.ports[0].usable);
  CHECK(probe.ports[0].gid_index == 0);
  CHECK(probe.ports[0].netdev == "ib0");
  CHECK(probe.rdma_usable);
  CHECK(probe.rdma_detail == "usable ports mlx5_0:1");
}

TEST_CASE("probe: RoCE with the mlx5 GID layout picks index 3 (IPv4, RoCE v2)", "[probe]") {
  Fixture fixture;
  fixture.mlx5_roce("mlx5_2", "net1");
  ProbeResult probe = fixture.probe();
  REQUIRE(probe.ports.size() == 1);
  CHECK(probe.ports[0].gid_index == 3);
  CHECK(probe.ports[0].netdev == "net1");
  CHECK(probe.ports[0].link_layer == "Ethernet");
  CHECK(probe.rdma_usable);
}

TEST_CASE("probe: IPv6-only GIDs leave the port unusable, with a warning", "[probe]") {
  Fixture fixture;
  fixture.port("bnxt_re0", 1, "4: ACTIVE", "Ethernet",
               {{kLinkLocal, "IB/RoCE v1", "eth1"},
                {kLinkLocal, "RoCE v2", "eth1"},
                {kUla, "IB/RoCE v1", "eth1"},
                {kUla, "RoCE v2", "eth1"}});
  ProbeResult probe = fixture.probe();
  REQUIRE(probe.ports.size() == 1);
  CHECK_FALSE(probe.ports[0].usable);
  CHECK(probe.ports[0].gid_index == -1);
  CHECK_FALSE(probe.rdma_usable);
  REQUIRE_FALSE(probe.warnings.empty());
  CHECK(probe.warnings[0].find("IPv6-only") != std::string::npos);
}

TEST_CASE("probe: a down port is excluded, its active sibling kept", "[probe]") {
  Fixture fixture;
  fixture.port("mlx5_0", 1, "1: DOWN", "InfiniBand");
  fixture.port("mlx5_0", 2, "4: ACTIVE", "InfiniBand");
  ProbeResult probe = fixture.probe();
  REQUIRE(probe.ports.size() == 2);
  CHECK_FALSE(probe.ports[0].usable);
  CHECK(probe.ports[0].why_not.find("1: DOWN") != std::string::npos);
  CHECK(probe.ports[1].usable);
  CHECK(probe.rdma_detail == "usable ports mlx5_0:2");

  Fixture only_down;
  only_down.port("mlx5_0", 1, "1: DOWN", "InfiniBand");
  CHECK_FALSE(only_down.probe().rdma_usable);
}

TEST_CASE("probe: an unreadable ndevs entry skips that GID", "[probe]") {
  Fixture fixture;
  fixture.port("mlx5_2", 1, "4: ACTIVE", "Ethernet",
               {{kLinkLocal, "IB/RoCE v1", "net1"},
                {kLinkLocal, "RoCE v2", "net1"},
                {kIpv4, "IB/RoCE v1", "net1"},
                {kIpv4, "RoCE v2", "!"},
                {kIpv4, "IB/RoCE v1", "net1"},
                {kIpv4, "RoCE v2", "net1"}});
  ProbeResult probe = fixture.probe();
  REQUIRE(probe.ports.size() == 1);
  CHECK(probe.ports[0].gid_index == 5);
  CHECK(probe.ports[0].usable);
}

TEST_CASE("probe: mlx5_1 beside mlx5_10 is matched exactly", "[probe]") {
  Fixture fixture;
  fixture.mlx5_roce("mlx5_1", "net1");
  fixture.mlx5_roce("mlx5_10", "net9");
  fixture.mlx5_roce("mlx5_2", "net2");
  ProbeResult only = fixture.probe({"mlx5_1"});
  REQUIRE(only.ports.size() == 1);
  CHECK(only.ports[0].device == "mlx5_1");
  CHECK(only.rdma_detail == "usable ports mlx5_1:1");

  // With no rails named, every HCA in natural order (mlx5_2 before mlx5_10).
  ProbeResult all = fixture.probe();
  REQUIRE(all.ports.size() == 3);
  CHECK(all.ports[0].device == "mlx5_1");
  CHECK(all.ports[1].device == "mlx5_2");
  CHECK(all.ports[2].device == "mlx5_10");

  ProbeResult missing = fixture.probe({"mlx5_3"});
  CHECK_FALSE(missing.rdma_usable);
  CHECK(missing.rdma_detail.find("device not present") != std::string::npos);
}

TEST_CASE("probe: an SR-IOV VF is recognised and mapped to its netdev", "[probe]") {
  Fixture fixture;
  fixture.mlx5_roce("mlx5_4", "net2");
  fixture.dir.write("sys/class/infiniband/mlx5_4/device/physfn/vendor", "0x15b3\n");
  fixture.dir.write("sys/class/infiniband/mlx5_4/device/net/net2/ifindex", "7\n");
  fixture.mlx5_roce("mlx5_0", "ens1f0");
  ProbeResult probe = fixture.probe();
  REQUIRE(probe.ports.size() == 2);
  CHECK_FALSE(probe.ports[0].virtual_function);
  CHECK(probe.ports[1].device == "mlx5_4");
  CHECK(probe.ports[1].virtual_function);
  CHECK(probe.ports[1].netdev == "net2");
  CHECK(probe.ports[1].usable);
}

TEST_CASE("probe: CapEff bit 14 with and without", "[probe]") {
  Fixture fixture;
  CHECK(boot::read_ipc_lock(fixture.dir.path() + "/proc") == true);
  fixture.capabilities(false);
  CHECK(boot::read_ipc_lock(fixture.dir.path() + "/proc") == false);
  CHECK_FALSE(boot::read_ipc_lock(fixture.dir.path() + "/nowhere").has_value());

  boot::MemlockState low;
  low.soft_bytes = 64 * 1024;
  std::string why;
  CHECK(boot::memlock_sufficient(true, low, 1 << 30, why));
  CHECK_FALSE(boot::memlock_sufficient(false, low, 1 << 30, why));
  CHECK(why.find("64 KiB") != std::string::npos);
  boot::MemlockState unlimited;
  unlimited.soft_unlimited = true;
  CHECK(boot::memlock_sufficient(false, unlimited, 1 << 30, why));
}

TEST_CASE("probe: a low RLIMIT_MEMLOCK without IPC_LOCK makes RDMA unusable", "[probe]") {
  Fixture fixture;
  fixture.mlx5_roce("mlx5_2", "net1");
  fixture.capabilities(false);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  // In a child, so the test process keeps its own limit.
  pid_t child = ::fork();
  if (child == 0) {
    rlimit limit = {64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_MEMLOCK, &limit);
    ProbeResult probe = fixture.probe();
    std::string verdict = (probe.rdma_usable ? "usable:" : "unusable:") + probe.rdma_detail;
    ssize_t ignored = ::write(pipe_fds[1], verdict.data(), verdict.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string verdict;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) verdict.append(buffer, n);
  ::close(pipe_fds[0]);
  ::waitpid(child, nullptr, 0);
  CHECK(verdict.starts_with("unusable:"));
  CHECK(verdict.find("memlock limit is 64 KiB") != std::string::npos);
}

TEST_CASE("probe: raising memlock lifts the soft limit to the hard one", "[probe]") {
  pid_t child = ::fork();
  if (child == 0) {
    rlimit limit;
    ::getrlimit(RLIMIT_MEMLOCK, &limit);
    if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max < 2) ::_exit(0);  // nothing to test
    limit.rlim_cur = limit.rlim_max / 2;
    ::setrlimit(RLIMIT_MEMLOCK, &limit);
    boot::MemlockState state = boot::raise_memlock();
    ::getrlimit(RLIMIT_MEMLOCK, &limit);
    ::_exit(state.raised && limit.rlim_cur == limit.rlim_max ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("probe: missing /dev/infiniband means RDMA is unusable", "[probe]") {
  Fixture fixture;
  fixture.port("mlx5_0", 1, "4: ACTIVE", "InfiniBand");
  std::filesystem::remove_all(fixture.dir.path() + "/dev/infiniband");
  ProbeResult probe = fixture.probe();
  CHECK_FALSE(probe.rdma_usable);
  CHECK(probe.rdma_detail.find("uverbs") != std::string::npos);
}

TEST_CASE("probe: GPUDirect markers and GPU count", "[probe]") {
  Fixture fixture;
  CHECK_FALSE(fixture.probe().gpudirect);
  fixture.dir.write("sys/module/nvidia_peermem/version", "1.0\n");
  fixture.dir.write("proc/driver/nvidia/gpus/0000:3b:00.0/information", "Model: H100\n");
  fixture.dir.write("proc/driver/nvidia/gpus/0000:5e:00.0/information", "Model: H100\n");
  ProbeResult probe = fixture.probe();
  CHECK(probe.gpudirect);
  CHECK(probe.gpu_count == 2);
}
