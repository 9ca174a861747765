// The status file `mlenvc status` reads (runtime/BOOT_CONFIG.md, shell_env): real mlenv-boot
// nodes on loopback each publish their rank and the transport the rendezvous chose.

#include <catch2/catch.hpp>

#include "boot_status.h"
#include "harness.h"
#include "util.h"

namespace {

using boot::Json;
using boot_test::BootProcess;
using boot_test::TempDir;

// A node tree without any RDMA device: `auto` falls back to TCP and says why.
void plain_tree(const TempDir& dir) {
  dir.write("plain/proc/self/status", "CapEff:\t00000000a80445fb\n");
  dir.mkdir("plain/sys");
  dir.mkdir("plain/dev");
}

// Node `rank` of two, its shell_env under `<dir>/pod<rank>/run/mlenv/` as in its own pod.
BootProcess start_node(const TempDir& dir, int rank, int port, bool dry_run) {
  const std::string r = std::to_string(rank);
  Json overrides = Json::object();
  overrides.set("transport", "auto")
      .set("command", Json(Json::Array{Json("true")}))
      .set("shell_env", dir.path() + "/pod" + r + "/run/mlenv/env.sh");
  std::string config =
      boot_test::write_config(dir, boot_test::test_config(overrides), "boot" + r + ".json");
  const std::string tree = dir.path() + "/plain";
  std::vector<std::string> args = {"--config",     config,
                                   "--rdzv",       "127.0.0.1:" + std::to_string(port),
                                   "--node-rank",  r,
                                   "--sysfs-root", tree + "/sys",
                                   "--proc-root",  tree + "/proc",
                                   "--dev-root",   tree + "/dev"};
  if (dry_run) args.push_back("--dry-run");
  // The configs differ (each pod's own shell_env), so the token must not be derived from them.
  return boot_test::start_boot(dir, "node" + r + (dry_run ? "dry" : ""), args,
                               {{"MLENV_JOB_TOKEN", "status-file-test"}});
}

}  // namespace

TEST_CASE("status file: every node publishes its rank and transport beside shell_env", "[status]") {
  TempDir dir;
  plain_tree(dir);
  int port = boot_test::free_port();
  std::vector<BootProcess> nodes = {start_node(dir, 0, port, false),
                                    start_node(dir, 1, port, false)};
  for (int rank = 0; rank < 2; ++rank) {
    BootProcess& node = nodes[static_cast<std::size_t>(rank)];
    INFO("node " << rank << " stderr: " << node.err());
    REQUIRE(boot_test::wait_exit(node, 30));
    REQUIRE(node.exit_code == 0);
    const std::string run = dir.path() + "/pod" + std::to_string(rank) + "/run/mlenv/";
    const std::string text = boot_test::slurp(run + "status.json");
    CHECK(text.ends_with("}\n"));
    auto status = boot::parse_json(text);
    REQUIRE(status.value);
    CHECK(status.value->find("format_version")->as_int() == 1);
    CHECK(status.value->find("job")->as_string() == "test/env");
    CHECK(status.value->find("node_rank")->as_int() == rank);
    CHECK(status.value->find("nnodes")->as_int() == 2);
    CHECK(status.value->find("world_size")->as_int() == 2);
    CHECK(status.value->find("transport")->as_string() == "tcp");
    CHECK(status.value->find("transport_reason")->as_string().find("cannot use RDMA") !=
          std::string::npos);
    CHECK(boot_test::slurp(run + "env.sh").find("export MLENV_TRANSPORT='tcp'") !=
          std::string::npos);
  }
}

TEST_CASE("status file: a dry run publishes nothing, and no shell_env means no file", "[status]") {
  TempDir dir;
  plain_tree(dir);
  int port = boot_test::free_port();
  std::vector<BootProcess> nodes = {start_node(dir, 0, port, true), start_node(dir, 1, port, true)};
  for (BootProcess& node : nodes) {
    INFO(node.err());
    REQUIRE(boot_test::wait_exit(node, 30));
    CHECK(node.exit_code == 0);
  }
  CHECK(!boot::path_exists(dir.path() + "/pod0/run/mlenv/status.json"));
  CHECK(!boot::path_exists(dir.path() + "/pod1/run/mlenv/status.json"));
  CHECK(boot::status_file_path("") == "");
  CHECK(boot::status_file_path("/run/mlenv/env.sh") == "/run/mlenv/status.json");
  CHECK(boot::status_file_path("env.sh") == "status.json");
}

TEST_CASE("status file: a service that exits is recorded there, not only logged", "[status]") {
  // A tool that dies at start (jupyter_server as root without allow_root exits 1) leaves the
  // job running and its port-forward leading nowhere: `mlenvc status` must see it.
  TempDir dir;
  plain_tree(dir);
  Json tool = Json::object();
  tool.set("name", "jupyter")
      .set("argv", Json(Json::Array{Json("sh"), Json("-c"), Json("exit 1")}));
  Json overrides = Json::object();
  overrides.set("nnodes", 1)
      .set("command", Json(Json::Array{Json("sleep"), Json("1")}))
      .set("services", Json(Json::Array{tool}))
      .set("shell_env", dir.path() + "/run/mlenv/env.sh");
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides), "boot.json");
  BootProcess node = boot_test::start_boot(
      dir, "node",
      {"--config", config, "--rdzv", "127.0.0.1:" + std::to_string(boot_test::free_port()),
       "--node-rank", "0", "--sysfs-root", dir.path() + "/plain/sys", "--proc-root",
       dir.path() + "/plain/proc", "--dev-root", dir.path() + "/plain/dev"},
      {{"MLENV_JOB_TOKEN", "status-file-test"}});
  INFO("stderr: " << node.err());
  REQUIRE(boot_test::wait_exit(node, 30));
  CHECK(node.exit_code == 0);  // the workers' result is the job's
  CHECK(node.err().find("service jupyter exited with code 1") != std::string::npos);
  auto status = boot::parse_json(boot_test::slurp(dir.path() + "/run/mlenv/status.json"));
  REQUIRE(status.value);
  const Json* exited = status.value->find("exited_services");
  REQUIRE(exited);
  REQUIRE(exited->as_array().size() == 1);
  CHECK(exited->as_array()[0].find("name")->as_string() == "service jupyter");
  CHECK(exited->as_array()[0].find("code")->as_int() == 1);
}
