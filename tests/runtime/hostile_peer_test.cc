// Rank 0 against clients that are not mlenv-boot nodes: idle connections, floods beyond its
// descriptor limit, endless lines (issue #11 items 15 and 16). Real sockets on 127.0.0.1 only,
// bounded in count and time.

#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "discovery.h"
#include "exit_code.h"
#include "harness.h"
#include "rendezvous.h"
#include "util.h"

using boot::Json;
using boot_test::BootProcess;
using boot_test::TempDir;

namespace {

std::vector<std::string> node_args(const std::string& config, int port, int rank,
                                   const std::string& timeout) {
  return {"--config",    config,
          "--rdzv",      "127.0.0.1:" + std::to_string(port),
          "--node-rank", std::to_string(rank),
          "--timeout",   timeout,
          "--dry-run"};
}

std::string config_for(const TempDir& dir, int nnodes) {
  Json overrides = Json::object();
  overrides.set("nnodes", nnodes);
  return boot_test::write_config(dir, boot_test::test_config(overrides));
}

// A plain TCP connection to 127.0.0.1:port; the kernel completes it from the listen backlog
// whether or not rank 0 ever accepts it.
boot::Fd connect_local(int port) {
  return boot::connect_with_retry({"127.0.0.1", port},
                                  boot::Clock::now() + std::chrono::seconds(5));
}

// Whether the other end closed the connection within `timeout_ms` (EOF or a reset).
bool closed_within(const boot::Fd& fd, int timeout_ms) {
  pollfd entry{fd.get(), POLLIN, 0};
  if (::poll(&entry, 1, timeout_ms) <= 0) return false;
  char byte;
  return ::recv(fd.get(), &byte, 1, MSG_DONTWAIT) <= 0;
}

int count_of(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// The peak resident set of a running process in KiB, from /proc/<pid>/status.
long peak_rss_kib(pid_t pid) {
  for (const std::string& line :
       boot::split(boot_test::slurp("/proc/" + std::to_string(pid) + "/status"), '\n')) {
    if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
  }
  return -1;
}

boot::JoinRequest rank0_request() {
  boot::JoinRequest self;
  self.job = "test/env";
  self.token = "token";
  self.nnodes = 2;
  self.report = {0, "127.0.0.1", false, "no RDMA device", 0};
  return self;
}

}  // namespace

TEST_CASE("hostile peers: idle connections beyond the descriptor limit do not keep a node out",
          "[rendezvous]") {
  TempDir dir;
  std::string config = config_for(dir, 2);
  int port = boot_test::free_port();
  // 64 descriptors for rank 0 and 200 idle clients queued before the real node: unbounded, rank
  // 0 would fill its table with them and never reach the node behind them.
  BootProcess rank0 =
      boot_test::start_boot(dir, "r0", node_args(config, port, 0, "20s"), {}, /*max_files=*/64);
  std::vector<boot::Fd> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(connect_local(port));
  double started = boot_test::now_s();
  BootProcess rank1 = boot_test::start_boot(dir, "r1", node_args(config, port, 1, "20s"));
  bool exited = boot_test::wait_exit(rank1, 15);
  exited = boot_test::wait_exit(rank0, 5) && exited;  // both waited for, so neither outlives us
  INFO("rank 0: " << rank0.err() << "\nrank 1: " << rank1.err());
  REQUIRE(exited);
  CHECK(rank1.exit_code == 0);
  CHECK(rank0.exit_code == 0);
  // Well inside the 10 s join deadline: the bound on pending connections let the node in.
  CHECK(boot_test::now_s() - started < 5);
  CHECK(rank0.err().find("connections have not joined; closed the oldest") != std::string::npos);
}

TEST_CASE("hostile peers: rank 0 out of descriptors waits instead of spinning", "[rendezvous]") {
  TempDir dir;
  // 64 nodes allow 144 pending connections, far more than 32 descriptors: accept() fails with
  // EMFILE while the backlog still holds clients, the case that spun at 100 % CPU.
  std::string config = config_for(dir, 64);
  int port = boot_test::free_port();
  BootProcess rank0 =
      boot_test::start_boot(dir, "r0", node_args(config, port, 0, "3s"), {}, /*max_files=*/32);
  std::vector<boot::Fd> idle;
  for (int i = 0; i < 100; ++i) idle.push_back(connect_local(port));
  bool exited = boot_test::wait_exit(rank0, 10);
  INFO("rank 0: " << rank0.err());
  REQUIRE(exited);
  CHECK(rank0.exit_code == boot::kExitRendezvousTimeout);
  CHECK(rank0.err().find("Too many open files") != std::string::npos);
  // About 3 s at EMFILE; a spinning loop burns nearly all of it.
  CHECK(rank0.cpu_s >= 0);
  CHECK(rank0.cpu_s < 0.5);
}

TEST_CASE("hostile peers: a connection that never joins is closed, the oldest first",
          "[rendezvous]") {
  boot::PendingLimits limits;
  limits.max_pending = 4;
  limits.join_within = std::chrono::seconds(1);
  int port = boot_test::free_port();
  boot::Coordinator coordinator(rank0_request(), port, limits);
  auto gathered = std::async(std::launch::async, [&] {
    return coordinator.gather(boot::Clock::now() + std::chrono::seconds(10));
  });

  // Five idle clients against a bound of four: the first is closed at once, the others wait.
  double started = boot_test::now_s();
  std::vector<boot::Fd> idle;
  for (int i = 0; i < 5; ++i) idle.push_back(connect_local(port));
  CHECK(closed_within(idle[0], 800));
  for (int i = 1; i < 5; ++i) CHECK_FALSE(closed_within(idle[static_cast<size_t>(i)], 0));
  // The rest are closed at their join deadline, not before it.
  for (int i = 1; i < 5; ++i) CHECK(closed_within(idle[static_cast<size_t>(i)], 3000));
  double waited = boot_test::now_s() - started;
  CHECK(waited >= 0.95);
  CHECK(waited < 2.5);

  // A real join is still welcome.
  boot::JoinRequest member = rank0_request();
  member.report.rank = 1;
  boot::LineConnection link(connect_local(port));
  REQUIRE(link.send(boot::join_to_json(member)));
  REQUIRE(gathered.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  std::vector<boot::NodeReport> reports = gathered.get();
  REQUIRE(reports.size() == 2);
  CHECK(reports[1].rank == 1);
}

TEST_CASE("hostile peers: a line without end costs rank 0 at most the line limit", "[rendezvous]") {
  TempDir dir;
  std::string config = config_for(dir, 2);
  int port = boot_test::free_port();
  BootProcess rank0 = boot_test::start_boot(dir, "r0", node_args(config, port, 0, "30s"));
  connect_local(port);  // rank 0 is listening
  long before = peak_rss_kib(rank0.pid);
  REQUIRE(before > 0);

  // Four clients each stream up to 64 MiB with no newline, at once.
  constexpr size_t kStream = size_t{64} << 20;
  auto stream = [port] {
    boot::Fd fd = connect_local(port);
    timeval limit = {5, 0};  // a rank 0 that neither reads nor closes must not hang the test
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    std::string chunk(size_t{64} << 10, 'x');
    size_t sent = 0;
    while (sent < kStream) {
      ssize_t n = ::send(fd.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    return sent;
  };
  std::vector<std::future<size_t>> streams;
  for (int i = 0; i < 4; ++i) streams.push_back(std::async(std::launch::async, stream));
  for (auto& sent : streams) CHECK(sent.get() < kStream);  // cut off, not read to the end
  long after = peak_rss_kib(rank0.pid);
  INFO("VmHWM before " << before << " KiB, after " << after << " KiB");
  CHECK(after - before < 4 * 1024);  // the old reader grew by 8.9 MiB here, 4 MiB a connection

  BootProcess rank1 = boot_test::start_boot(dir, "r1", node_args(config, port, 1, "30s"));
  bool exited = boot_test::wait_exit(rank1, 15);
  exited = boot_test::wait_exit(rank0, 5) && exited;  // both waited for, so neither outlives us
  INFO("rank 0: " << rank0.err() << "\nrank 1: " << rank1.err());
  REQUIRE(exited);
  CHECK(rank1.exit_code == 0);
  CHECK(rank0.exit_code == 0);
  // One log line per offending connection.
  CHECK(count_of(rank0.err(), "sent a line longer than 65536 bytes") == 4);
}

TEST_CASE("hostile peers: the line limit holds while reading, across reads", "[rendezvous]") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
  boot::Fd writer(fds[0]);
  boot::LineConnection reader(boot::Fd(fds[1]), 1000);
  std::vector<Json> messages;
  // A line exactly at the limit passes, split over two writes.
  std::string line = "{\"t\":\"" + std::string(1000 - 8, 'a') + "\"}";
  REQUIRE(line.size() == 1000);
  REQUIRE(::write(writer.get(), line.data(), 600) == 600);
  CHECK(reader.receive(messages));
  CHECK(reader.buffered() == 600);
  std::string rest = line.substr(600) + "\n";
  REQUIRE(::write(writer.get(), rest.data(), rest.size()) == static_cast<ssize_t>(rest.size()));
  CHECK(reader.receive(messages));
  CHECK(messages.size() == 1);
  CHECK(reader.buffered() == 0);
  // One byte more is refused as soon as it arrives, before any newline.
  std::string longer(1001, 'b');
  REQUIRE(::write(writer.get(), longer.data(), longer.size()) ==
          static_cast<ssize_t>(longer.size()));
  CHECK_FALSE(reader.receive(messages));
  CHECK(reader.failure() == "sent a line longer than 1000 bytes");
  CHECK(reader.buffered() == 0);
  CHECK_FALSE(reader.receive(messages));  // dead for good
}
