// The one duration reader (compiler/base/duration.h), which the language's `duration` type and
// every `--timeout` share, and the one shell word writer (compiler/base/shell.h), which the
// Dockerfile and the commands apply prints share.

#include <catch2/catch.hpp>

#include <string>

#include "compiler/apply/runner.h"
#include "compiler/base/duration.h"
#include "compiler/base/shell.h"

namespace mlenv {
namespace {

TEST_CASE("durations are parts of digits and a unit, in milliseconds") {
  CHECK(parse_duration_ms("30s") == 30'000);
  CHECK(parse_duration_ms("1h30m") == 5'400'000);
  CHECK(parse_duration_ms("250ms") == 250);
  CHECK(parse_duration_ms("1m1ms") == 60'001);
  CHECK(parse_duration_ms("0s") == 0);
  CHECK(parse_duration_ms("999999999999h") == 999'999'999'999LL * 3'600'000);
  for (const char* bad :
       {"", "s", "30", "30x", "-5s", "1.5h", "1h 30m", "1000000000000s", "5mss"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration_ms(bad));
  }
  // Many parts of twelve digits each: the sum saturates into a refusal, never a wrap.
  std::string many;
  for (int i = 0; i < 4000; ++i) many += "999999999999h";
  CHECK_FALSE(parse_duration_ms(many));
}

TEST_CASE("a --timeout is a duration of whole seconds, from one second to 30 days") {
  CHECK(plan::parse_duration("90s") == 90);
  CHECK(plan::parse_duration("720h") == plan::kMaxDurationSeconds);
  CHECK_FALSE(plan::parse_duration("500ms"));
  CHECK_FALSE(plan::parse_duration("1s500ms"));
  CHECK_FALSE(plan::parse_duration("0s"));
  CHECK_FALSE(plan::parse_duration("721h"));
}

TEST_CASE("a shell word is bare only where the shell reads it back unchanged") {
  CHECK(shell_word("kubectl") == "kubectl");
  CHECK(shell_word("--field-manager=mlenvc") == "--field-manager=mlenvc");
  CHECK(shell_word("torch==2.5,<3") == "'torch==2.5,<3'");
  CHECK(shell_word("50%") == "50%");
  CHECK(shell_word("") == "''");
  CHECK(shell_word("a b") == "'a b'");
  CHECK(shell_word("it's") == "'it'\\''s'");
  CHECK(shell_word("$HOME") == "'$HOME'");
  CHECK(shell_word("x\ny") == "'x\ny'");
  CHECK(shell_word("caf\xc3\xa9") == "'caf\xc3\xa9'");
}

}  // namespace
}  // namespace mlenv
