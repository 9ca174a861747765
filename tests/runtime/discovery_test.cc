#include <catch2/catch.hpp>

#include <thread>

#include "discovery.h"
#include "exit_code.h"
#include "harness.h"

using boot::Clock;
using boot::Endpoint;

TEST_CASE("discovery: late DNS is retried with backoff until it resolves", "[discovery]") {
  int port = boot_test::free_port();
  boot::Fd listener = boot::listen_tcp(port);
  int calls = 0;
  auto late_dns = [&](const Endpoint& endpoint, std::string& error) {
    if (++calls <= 3) {
      error = "cannot resolve " + endpoint.host + ": Name or service not known";
      return std::vector<boot::ResolvedAddress>{};
    }
    return boot::system_resolver({"127.0.0.1", endpoint.port}, error);
  };
  boot::Backoff fast{0.01, 0.04, 0.01, 0.05};
  double started = boot_test::now_s();
  boot::Fd fd = boot::connect_with_retry({"env-0.env-headless.ns.svc", port},
                                         Clock::now() + std::chrono::seconds(5), late_dns, fast);
  CHECK(fd.valid());
  CHECK(calls == 4);
  CHECK(boot_test::now_s() - started >= 0.01 + 0.02 + 0.04 - 0.005);  // 3 waits, doubling
}

TEST_CASE("discovery: a name that resolves but refuses is retried until it listens",
          "[discovery]") {
  int port = boot_test::free_port();
  std::thread late_listener([port] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    boot::Fd listener = boot::listen_tcp(port);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  });
  boot::Fd fd =
      boot::connect_with_retry({"localhost", port}, Clock::now() + std::chrono::seconds(5));
  CHECK(fd.valid());
  late_listener.join();
}

TEST_CASE("discovery: never reachable ends at the deadline with the last error", "[discovery]") {
  auto never = [](const Endpoint&, std::string& error) {
    error = "cannot resolve env-0: Name or service not known";
    return std::vector<boot::ResolvedAddress>{};
  };
  double started = boot_test::now_s();
  try {
    boot::connect_with_retry({"env-0", 29400}, Clock::now() + std::chrono::milliseconds(400), never,
                             {0.05, 0.1, 0.01, 0.05});
    FAIL("connected to nothing");
  } catch (const boot::BootError& error) {
    CHECK(error.code() == boot::kExitRendezvousTimeout);
    CHECK(std::string(error.what()).find("Name or service not known") != std::string::npos);
  }
  double took = boot_test::now_s() - started;
  CHECK(took >= 0.39);
  CHECK(took < 1.5);
}

TEST_CASE("discovery: endpoints", "[discovery]") {
  auto plain = boot::parse_endpoint("10.0.0.1:29400");
  REQUIRE(plain);
  CHECK(plain->host == "10.0.0.1");
  CHECK(plain->port == 29400);
  auto v6 = boot::parse_endpoint("[::1]:1234");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK_FALSE(boot::parse_endpoint("host"));
  CHECK_FALSE(boot::parse_endpoint("host:0"));
  CHECK_FALSE(boot::parse_endpoint(":80"));
  CHECK_FALSE(boot::parse_endpoint("host:99999"));
}
