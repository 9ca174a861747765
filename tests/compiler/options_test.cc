// The one option parser every subcommand uses (issue #11.23): `--key value` and `--key=value`
// read alike, so `plan F --format json` and `apply --timeout 30m` work as `build` does.

#include <catch2/catch.hpp>

#include "compiler/driver/options.h"

namespace mlenv::driver {
namespace {

TEST_CASE("a value is read after a space or after =") {
  Options spaced = parse_options({"plan", "f.mlenv", "--format", "json", "--timeout", "30m"},
                                 {"check"}, {"format", "timeout"});
  Options joined = parse_options({"plan", "f.mlenv", "--format=json", "--timeout=30m"}, {"check"},
                                 {"format", "timeout"});
  for (const Options& o : {spaced, joined}) {
    CHECK(o.error.empty());
    CHECK(o.value("format") == "json");
    CHECK(o.value("timeout") == "30m");
    CHECK(o.positional == std::vector<std::string>{"plan", "f.mlenv"});
  }
}

TEST_CASE("flags, the last of repeated values, and positionals after --") {
  Options o = parse_options({"--check", "--rank", "1", "--rank=2", "--", "--not-an-option"},
                            {"check"}, {"rank"});
  CHECK(o.flag("check"));
  CHECK(o.value("rank") == "2");
  CHECK(o.values["rank"].size() == 2);
  CHECK(o.positional == std::vector<std::string>{"--not-an-option"});
}

TEST_CASE("unknown options, a flag given a value and a missing value are errors") {
  CHECK(parse_options({"--bogus"}, {}, {}).error == "unknown option `--bogus`");
  CHECK(parse_options({"--check=yes"}, {"check"}, {}).error == "unknown option `--check=yes`");
  CHECK(parse_options({"--timeout"}, {}, {"timeout"}).error == "option `--timeout` needs a value");
}

TEST_CASE("the format option is text or json") {
  bool json = false;
  CHECK(json_format(parse_options({"--format", "json"}, {}, {"format"}), json));
  CHECK(json);
  CHECK_FALSE(json_format(parse_options({"--format", "yaml"}, {}, {"format"}), json));
}

}  // namespace
}  // namespace mlenv::driver
