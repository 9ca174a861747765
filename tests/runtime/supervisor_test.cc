#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <thread>

#include "exit_code.h"
#include "harness.h"
#include "util.h"

using boot::Json;
using boot_test::BootProcess;
using boot_test::TempDir;

namespace {

// A single-node job of `nproc` stand-in workers running a shell snippet.
BootProcess run_workers(const TempDir& dir, int nproc, const std::string& script,
                        double grace_s = 2, std::map<std::string, std::string> env = {}) {
  Json overrides = Json::object();
  overrides.set("nnodes", 1).set("nproc_per_node", nproc);
  Json timeouts = *boot_test::test_config().find("timeouts");
  timeouts.set("grace_s", grace_s);
  overrides.set("timeouts", timeouts);
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  return boot_test::start_boot(
      dir, "boot", {"--config", config, "--node-rank", "0", "--", "sh", "-c", script}, env);
}

}  // namespace

TEST_CASE("supervisor: workers get exactly torchrun's environment", "[supervisor]") {
  TempDir dir;
  BootProcess boot = run_workers(dir, 4, "env > " + dir.path() + "/env.$LOCAL_RANK", 2,
                                 {{"RANK", "5"}, {"NCCL_DEBUG", "INFO"}});
  REQUIRE(boot_test::wait_exit(boot, 10));
  INFO(boot.err());
  REQUIRE(boot.exit_code == 0);
  for (int local = 0; local < 4; ++local) {
    auto env = boot_test::read_env_file(dir.path() + "/env." + std::to_string(local));
    std::string rank = std::to_string(local);
    const std::map<std::string, std::string> expected = {
        {"RANK", rank},  // the user's RANK=5 is a node rank and gets replaced
        {"LOCAL_RANK", rank},
        {"ROLE_RANK", rank},
        {"GROUP_RANK", "0"},
        {"WORLD_SIZE", "4"},
        {"LOCAL_WORLD_SIZE", "4"},
        {"GROUP_WORLD_SIZE", "1"},
        {"ROLE_WORLD_SIZE", "4"},
        {"ROLE_NAME", "default"},
        {"MASTER_ADDR", "env-0.env-headless.ns.svc"},
        {"MASTER_PORT", "29500"},
        {"TORCHELASTIC_RESTART_COUNT", "0"},
        {"TORCHELASTIC_MAX_RESTARTS", "0"},
        {"TORCHELASTIC_RUN_ID", "test/env"},
        {"TORCHELASTIC_USE_AGENT_STORE", "False"},
        {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
        {"OMP_NUM_THREADS", "1"},
        {"NCCL_DEBUG", "INFO"},  // the user's own value
        {"NCCL_IB_DISABLE", "1"}};
    for (const auto& [name, value] : expected) {
      INFO("local rank " << local << " " << name);
      REQUIRE(env.count(name) == 1);
      CHECK(env.at(name) == value);
    }
  }
}

TEST_CASE("supervisor: a failing worker's code propagates and stops its siblings", "[supervisor]") {
  TempDir dir;
  double started = boot_test::now_s();
  BootProcess boot =
      run_workers(dir, 3, "if [ $LOCAL_RANK = 1 ]; then sleep 0.2; exit 7; fi; exec sleep 30", 5);
  REQUIRE(boot_test::wait_exit(boot, 10));
  CHECK(boot.exit_code == 7);
  CHECK(boot_test::now_s() - started < 3);  // siblings ended by SIGTERM, not the grace period
  CHECK(boot.err().find("error: worker 1 exited with code 7") != std::string::npos);
}

TEST_CASE("supervisor: a worker ignoring SIGTERM is killed after the grace period",
          "[supervisor]") {
  TempDir dir;
  BootProcess boot = run_workers(dir, 2,
                                 "trap '' TERM; echo $$ > " + dir.path() +
                                     "/pid.$LOCAL_RANK; if [ $LOCAL_RANK = 0 ]; then sleep 0.2; "
                                     "exit 5; fi; exec sleep 30",
                                 1);
  REQUIRE(boot_test::wait_for_file(dir.path() + "/pid.1", 5));
  double started = boot_test::now_s();
  REQUIRE(boot_test::wait_exit(boot, 10));
  double took = boot_test::now_s() - started;
  CHECK(boot.exit_code == 5);
  CHECK(took >= 1.0);  // grace_s
  CHECK(took < 3.0);
  CHECK(boot.err().find("SIGKILL") != std::string::npos);
  pid_t stubborn = static_cast<pid_t>(std::stol(boot_test::slurp(dir.path() + "/pid.1")));
  CHECK_FALSE(boot_test::pid_alive(stubborn));
}

TEST_CASE("supervisor: no zombies, orphans included", "[supervisor]") {
  // As a subreaper the test would inherit orphans mlenv-boot failed to adopt and leave them as
  // zombies, which makes a missing reap visible.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  TempDir dir;
  BootProcess boot =
      run_workers(dir, 2,
                  "if [ $LOCAL_RANK = 0 ]; then (sleep 0.1) & echo $! > " + dir.path() +
                      "/orphan; echo $$ > " + dir.path() + "/quick; exit 0; fi; sleep 1.2");
  REQUIRE(boot_test::wait_for_file(dir.path() + "/quick", 5));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  pid_t quick = static_cast<pid_t>(std::stol(boot_test::slurp(dir.path() + "/quick")));
  pid_t orphan = static_cast<pid_t>(std::stol(boot_test::slurp(dir.path() + "/orphan")));
  CHECK_FALSE(boot_test::pid_alive(quick));
  CHECK_FALSE(boot_test::pid_alive(orphan));
  CHECK_FALSE(boot_test::is_zombie(quick));
  CHECK_FALSE(boot_test::is_zombie(orphan));
  REQUIRE(boot_test::wait_exit(boot, 10));
  CHECK(boot.exit_code == 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_CASE("supervisor: what a worker daemonized ends with the job", "[supervisor]") {
  // The test adopts whatever outlives mlenv-boot, so a daemon left running would show here.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  TempDir dir;
  BootProcess boot = run_workers(
      dir, 1, "setsid sleep 60 < /dev/null > /dev/null 2>&1 & echo $! > " + dir.path() + "/daemon");
  REQUIRE(boot_test::wait_exit(boot, 10));
  INFO(boot.err());
  CHECK(boot.exit_code == 0);
  pid_t daemon = static_cast<pid_t>(std::stol(boot_test::slurp(dir.path() + "/daemon")));
  // Gone, or killed and waiting for this test (its new parent) to reap it.
  bool ended = !boot_test::pid_alive(daemon) || boot_test::is_zombie(daemon);
  CHECK(ended);
  int status = 0;
  ::waitpid(daemon, &status, WNOHANG);
  if (!ended) ::kill(daemon, SIGKILL);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_CASE("supervisor: SIGTERM and SIGINT are forwarded to the workers", "[supervisor]") {
  for (int signal : {SIGTERM, SIGINT}) {
    TempDir dir;
    BootProcess boot = run_workers(dir, 2,
                                   "trap 'echo got > " + dir.path() +
                                       "/got.$LOCAL_RANK; exit 0' TERM INT; touch " + dir.path() +
                                       "/up.$LOCAL_RANK; while :; do sleep 0.05; done");
    REQUIRE(boot_test::wait_for_file(dir.path() + "/up.0", 5));
    REQUIRE(boot_test::wait_for_file(dir.path() + "/up.1", 5));
    ::kill(boot.pid, signal);
    REQUIRE(boot_test::wait_exit(boot, 10));
    CHECK(boot.exit_code == 128 + signal);
    CHECK(boot_test::slurp(dir.path() + "/got.0") == "got\n");
    CHECK(boot_test::slurp(dir.path() + "/got.1") == "got\n");
  }
}

TEST_CASE("supervisor: configuration errors get their own code and one line", "[supervisor]") {
  TempDir dir;
  BootProcess missing = boot_test::start_boot(dir, "m", {"--config", dir.path() + "/none.json"});
  REQUIRE(boot_test::wait_exit(missing, 5));
  CHECK(missing.exit_code == boot::kExitConfigError);
  CHECK(missing.err() ==
        "mlenv-boot: error: cannot read the config " + dir.path() + "/none.json\n");
  BootProcess bad_flag = boot_test::start_boot(dir, "f", {"--bogus"});
  REQUIRE(boot_test::wait_exit(bad_flag, 5));
  CHECK(bad_flag.exit_code == boot::kExitConfigError);
  std::string config = boot_test::write_config(dir, boot_test::test_config());
  BootProcess no_rank = boot_test::start_boot(dir, "r", {"--config", config, "--node-rank", "2"});
  REQUIRE(boot_test::wait_exit(no_rank, 5));
  CHECK(no_rank.exit_code == boot::kExitConfigError);
  CHECK(no_rank.err().find("out of range for nnodes 2") != std::string::npos);
}

TEST_CASE("supervisor: a dev environment runs its services until told to stop", "[supervisor]") {
  TempDir dir;
  Json overrides = Json::object();
  overrides.set("nnodes", 1);
  Json service = Json::object();
  Json argv = Json::array();
  argv.push("sh").push("-c").push("touch " + dir.path() + "/svc; exec sleep 30");
  service.set("name", "vscode").set("argv", argv);
  Json services = Json::array();
  services.push(service);
  overrides.set("services", services);
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  BootProcess boot = boot_test::start_boot(dir, "dev", {"--config", config, "--node-rank", "0"});
  REQUIRE(boot_test::wait_for_file(dir.path() + "/svc", 5));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(boot_test::pid_alive(boot.pid));
  ::kill(boot.pid, SIGTERM);
  REQUIRE(boot_test::wait_exit(boot, 10));
  CHECK(boot.exit_code == 128 + SIGTERM);
}
