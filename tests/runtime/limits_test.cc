// Durations are bounded where they are read (issue #11 item 17): every timeout in boot.json and on
// the command line, and the conversion of seconds to clock durations.

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "clock.h"
#include "config.h"
#include "exit_code.h"
#include "harness.h"
#include "options.h"

using boot::BootError;
using boot::Json;

namespace {

// The config error for one timeout value, or "" when it is accepted.
std::string error_for(const std::string& key, const Json& value) {
  Json timeouts = Json::object();
  timeouts.set(key, value);
  Json overrides = Json::object();
  overrides.set("timeouts", timeouts);
  try {
    boot::parse_config(boot_test::test_config(overrides).dump());
  } catch (const BootError& error) {
    CHECK(error.code() == boot::kExitConfigError);
    return error.what();
  }
  return "";
}

std::string timeout_flag_error(const std::string& value) {
  try {
    boot::parse_options({"--config", "boot.json", "--timeout", value});
  } catch (const BootError& error) {
    CHECK(error.code() == boot::kExitConfigError);
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("limits: each timeout in boot.json is checked against its bounds", "[config]") {
  const double week = 7 * 24 * 3600;
  for (const char* key : {"discovery_s", "rendezvous_s"}) {
    INFO(key);
    CHECK(error_for(key, 0.001) == "");
    CHECK(error_for(key, week) == "");
    CHECK(error_for(key, 0).find(std::string("`timeouts.") + key + "` must be") !=
          std::string::npos);
    CHECK(error_for(key, -5) != "");
    CHECK(error_for(key, week + 1) != "");
    CHECK(error_for(key, 1e10) != "");  // used to overflow into an immediate timeout
    CHECK(error_for(key, "600") != "");
  }
  CHECK(error_for("heartbeat_s", 0.1) == "");
  CHECK(error_for("heartbeat_s", 60) == "");
  CHECK(error_for("heartbeat_s", 0.099) != "");
  CHECK(error_for("heartbeat_s", 0.001).find("`timeouts.heartbeat_s` must be") !=
        std::string::npos);  // used to read as a lost peer
  CHECK(error_for("heartbeat_s", 60.5) != "");
  CHECK(error_for("grace_s", 0) == "");
  CHECK(error_for("grace_s", 3600) == "");
  CHECK(error_for("grace_s", -0.5) != "");
  CHECK(error_for("grace_s", 3601).find("`timeouts.grace_s` must be") != std::string::npos);

  Json check = Json::object();
  check.set("timeout_s", 1e10);
  Json overrides = Json::object();
  overrides.set("nccl_check", check);
  CHECK_THROWS_WITH(boot::parse_config(boot_test::test_config(overrides).dump()),
                    Catch::Contains("`nccl_check.timeout_s` must be"));
}

TEST_CASE("limits: a number too large for a double is not a duration", "[config]") {
  // 1e400 overflows strtod to infinity, which JSON cannot mean.
  std::string text = boot_test::test_config().dump();
  size_t at = text.find("\"rendezvous_s\":20");
  REQUIRE(at != std::string::npos);
  text.replace(at, 17, "\"rendezvous_s\":1e400");
  CHECK_THROWS_AS(boot::parse_config(text), BootError);
}

TEST_CASE("limits: --timeout is checked like the deadlines it replaces", "[config]") {
  CHECK(timeout_flag_error("30s") == "");
  CHECK(timeout_flag_error("168h") == "");  // 7 days
  CHECK(timeout_flag_error("169h").find("--timeout must be") != std::string::npos);
  CHECK(timeout_flag_error("1e300s").find("--timeout must be") != std::string::npos);
  CHECK(timeout_flag_error("1e308h") != "");  // infinite after scaling
  CHECK(timeout_flag_error("inf") != "");
  CHECK(timeout_flag_error("nan") != "");
  CHECK(timeout_flag_error("0s") != "");
  CHECK_FALSE(boot::parse_duration("infs"));
}

TEST_CASE("limits: seconds become clock durations without overflow", "[config]") {
  using boot::Clock;
  CHECK(boot::clock_duration(1.5) == std::chrono::milliseconds(1500));
  CHECK(boot::clock_duration(0) == Clock::duration::zero());
  CHECK(boot::clock_duration(-1) == Clock::duration::zero());
  CHECK(boot::clock_duration(std::nan("")) == Clock::duration::zero());
  // 1e10 s is 1e19 ns, past INT64_MAX: a duration_cast wraps; this saturates.
  CHECK(boot::clock_duration(1e10) == Clock::duration::max());
  CHECK(boot::clock_duration(1e300) == Clock::duration::max());
  CHECK(boot::clock_duration(std::numeric_limits<double>::infinity()) == Clock::duration::max());
  Clock::time_point now = Clock::now();
  CHECK(boot::time_after(now, 1e10) == Clock::time_point::max());
  CHECK(boot::time_after(now, 1e300) > now);
  CHECK(boot::time_after(now, 7 * 24 * 3600) - now == std::chrono::hours(7 * 24));
  CHECK(boot::time_after(Clock::time_point::max() - std::chrono::seconds(1), 2) ==
        Clock::time_point::max());
}

TEST_CASE("limits: mlenv-boot exits 78 naming the key for an out-of-range timeout", "[config]") {
  boot_test::TempDir dir;
  Json timeouts = Json::object();
  timeouts.set("rendezvous_s", 1e10);
  Json overrides = Json::object();
  overrides.set("timeouts", timeouts);
  std::string config = boot_test::write_config(dir, boot_test::test_config(overrides));
  boot_test::BootProcess bad_config =
      boot_test::start_boot(dir, "config", {"--config", config, "--node-rank", "1", "--dry-run"});
  REQUIRE(boot_test::wait_exit(bad_config, 10));
  CHECK(bad_config.exit_code == boot::kExitConfigError);
  CHECK(bad_config.err().find("`timeouts.rendezvous_s` must be") != std::string::npos);

  std::string good = boot_test::write_config(dir, boot_test::test_config(), "good.json");
  boot_test::BootProcess bad_flag = boot_test::start_boot(
      dir, "flag", {"--config", good, "--node-rank", "1", "--timeout", "1e300s", "--dry-run"});
  REQUIRE(boot_test::wait_exit(bad_flag, 10));
  CHECK(bad_flag.exit_code == boot::kExitConfigError);
  CHECK(bad_flag.err().find("--timeout must be") != std::string::npos);
}
