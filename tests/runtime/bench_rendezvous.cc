// Benchmark of mlenv-boot; prints its figures (runtime/README.md records them and the method).
//   runtime_bench            all measurements
//   runtime_bench stamp FILE (internal) writes CLOCK_MONOTONIC in ns to FILE: the "command"
//
// 1. rendezvous of 256 local --dry-run processes, timed from the start of the last process to the
//    exit of the last one, with rank 0 started last and started first;
// 2. launch overhead: from spawning mlenv-boot to its command running, against spawning the
//    command directly, for one node and for two nodes with the peer already up;
// 3. resident memory of mlenv-boot while supervising.

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "util.h"

using boot::Json;
using boot_test::BootProcess;
using boot_test::TempDir;

namespace {

double monotonic_s() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// Waits for a process and returns its peak resident set in KiB.
long wait_rss_kib(pid_t pid, int& exit_code) {
  int status = 0;
  rusage usage = {};
  ::wait4(pid, &status, 0, &usage);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return usage.ru_maxrss;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::string config_for(const TempDir& dir, int nnodes, const Json& command) {
  Json overrides = Json::object();
  overrides.set("nnodes", nnodes).set("nproc_per_node", 8).set("command", command);
  Json timeouts = *boot_test::test_config().find("timeouts");
  timeouts.set("heartbeat_s", 5);
  overrides.set("timeouts", timeouts);
  return boot_test::write_config(dir, boot_test::test_config(overrides),
                                 "boot" + std::to_string(nnodes) + ".json");
}

std::vector<std::string> args(const std::string& config, int port, int rank,
                              std::vector<std::string> extra) {
  std::vector<std::string> out = {"--config",    config,
                                  "--rdzv",      "127.0.0.1:" + std::to_string(port),
                                  "--node-rank", std::to_string(rank)};
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

// Returns seconds from the last start to the last exit, and the largest peak RSS seen.
double rendezvous_round(int nnodes, bool rank0_last, long& max_rss_kib) {
  TempDir dir;
  std::string config = config_for(dir, nnodes, Json::array());
  int port = boot_test::free_port();
  std::vector<BootProcess> nodes(static_cast<size_t>(nnodes));
  double last_start = 0;
  auto start = [&](int rank) {
    nodes[static_cast<size_t>(rank)] = boot_test::start_boot(
        dir, "n" + std::to_string(rank), args(config, port, rank, {"--dry-run"}));
    last_start = monotonic_s();
  };
  if (!rank0_last) start(0);
  for (int rank = 1; rank < nnodes; ++rank) start(rank);
  if (rank0_last) {
    // Let the members reach their retry loop first, as when rank 0's pod is scheduled last.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    start(0);
  }
  for (BootProcess& node : nodes) {
    int code = 0;
    max_rss_kib = std::max(max_rss_kib, wait_rss_kib(node.pid, code));
    if (code != 0) {
      std::fprintf(stderr, "a node failed (%d): %s\n", code, node.err().c_str());
      return -1;
    }
  }
  return monotonic_s() - last_start;
}

// Seconds from spawning `argv` to the stamp command writing its time.
double launch_latency(const TempDir& dir, const std::vector<std::string>& boot_args,
                      const std::string& stamp, bool through_boot) {
  ::unlink(stamp.c_str());
  double spawned = monotonic_s();
  pid_t pid;
  if (through_boot) {
    pid = boot_test::start_boot(dir, "launch", boot_args).pid;
  } else {
    pid = ::fork();
    if (pid == 0) {
      ::execl("/proc/self/exe", "runtime_bench", "stamp", stamp.c_str(), nullptr);
      ::_exit(127);
    }
  }
  int code = 0;
  wait_rss_kib(pid, code);
  std::string text = boot_test::slurp(stamp);
  if (code != 0 || text.empty()) return -1;
  return std::stod(text) - spawned;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "stamp") {
    // The first worker to start writes; the others find the file and leave it.
    std::string text = std::to_string(monotonic_s());
    int fd = ::open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      ssize_t ignored = ::write(fd, text.data(), text.size());
      (void)ignored;
      ::close(fd);
    }
    return 0;
  }
  char exe[4096] = {};
  ssize_t length = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  std::string self(exe, length > 0 ? static_cast<size_t>(length) : 0);

  std::printf("mlenv-boot benchmark (%u CPUs online)\n",
              static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN)));

  // 1. Rendezvous of 256.
  for (bool rank0_last : {true, false}) {
    std::vector<double> rounds;
    long rss = 0;
    for (int round = 0; round < 5; ++round) {
      double took = rendezvous_round(256, rank0_last, rss);
      if (took < 0) return 1;
      rounds.push_back(took);
    }
    std::printf(
        "rendezvous of 256 processes, rank 0 started %s: last start -> last exit median "
        "%.3f s, max %.3f s (5 rounds); peak RSS of any node %ld KiB\n",
        rank0_last ? "last" : "first", median(rounds),
        *std::max_element(rounds.begin(), rounds.end()), rss);
  }

  // 2. Launch overhead.
  TempDir dir;
  std::string stamp = dir.path() + "/stamp";
  Json command = Json::array();
  command.push(self).push("stamp").push(stamp);
  std::string single = config_for(dir, 1, command);
  std::vector<double> direct, solo, pair;
  for (int round = 0; round < 20; ++round) {
    direct.push_back(launch_latency(dir, {}, stamp, false));
    solo.push_back(launch_latency(dir, {"--config", single, "--node-rank", "0"}, stamp, true));
  }
  std::string two = config_for(dir, 2, command);
  for (int round = 0; round < 20; ++round) {
    // Rank 0 is up and waiting; time rank 1 from spawn to its first worker running.
    int port = boot_test::free_port();
    BootProcess peer = boot_test::start_boot(dir, "peer", args(two, port, 0, {}));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pair.push_back(launch_latency(dir, args(two, port, 1, {}), stamp, true));
    int code = 0;
    wait_rss_kib(peer.pid, code);
  }
  for (const auto& [name, values] :
       {std::pair{"direct spawn of the command (baseline)", direct},
        std::pair{"mlenv-boot, 1 node, 8 workers", solo},
        std::pair{"mlenv-boot rank 1, 2 nodes, rank 0 up, 8 workers", pair}}) {
    if (*std::min_element(values.begin(), values.end()) < 0) return 1;
    std::printf("%s: spawn -> first worker running median %.2f ms, max %.2f ms (20 runs)\n", name,
                median(values) * 1e3, *std::max_element(values.begin(), values.end()) * 1e3);
  }
  std::printf("added by mlenv-boot (median, 2 nodes, peer up): %.2f ms\n",
              (median(pair) - median(direct)) * 1e3);

  // 3. Resident memory while supervising 8 workers.
  Json sleeper = Json::array();
  sleeper.push("sleep").push("1");
  std::string supervised = config_for(dir, 1, sleeper);
  BootProcess boot =
      boot_test::start_boot(dir, "rss", {"--config", supervised, "--node-rank", "0"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::string status = boot_test::slurp("/proc/" + std::to_string(boot.pid) + "/status");
  for (const std::string& line : boot::split(status, '\n')) {
    if (line.starts_with("VmRSS") || line.starts_with("VmHWM")) {
      std::printf("mlenv-boot supervising 8 workers: %s\n", std::string(boot::trim(line)).c_str());
    }
  }
  int code = 0;
  wait_rss_kib(boot.pid, code);
  return 0;
}
