// The linear-time pattern matcher against std::regex's answers, and on inputs std::regex
// could not survive.

#include "compiler/base/pattern.h"

#include <catch2/catch.hpp>

#include <string>

namespace mlenv {
namespace {

bool full(std::string_view pattern, std::string_view text) {
  return Pattern::literal(pattern).matches(text);
}
bool find(std::string_view pattern, std::string_view text) {
  return Pattern::literal(pattern).search(text);
}

TEST_CASE("the schema refinements match as ECMAScript regular expressions do") {
  const char* device = "^[A-Za-z0-9_]+$";
  CHECK(find(device, "mlx5_6"));
  CHECK_FALSE(find(device, "mlx5-6"));
  CHECK_FALSE(find(device, ""));
  const char* resource = R"(^[A-Za-z0-9.-]+\/[A-Za-z0-9_.-]+$)";
  CHECK(find(resource, "openshift.io/eno5np0rdma"));
  CHECK_FALSE(find(resource, "openshift.io/a/b"));
  const char* range = R"(^[0-9A-Fa-f:.]+\/[0-9]{1,3}$)";
  CHECK(find(range, "192.168.5.0/24"));
  CHECK(find(range, "fd00::/128"));
  CHECK_FALSE(find(range, "192.168.5.0/1234"));
  const char* exclude = R"(^[0-9A-Fa-f:.]+(\/[0-9]{1,3})?$)";
  CHECK(find(exclude, "192.168.5.1"));
  CHECK(find(exclude, "192.168.5.0/30"));
  CHECK_FALSE(find(exclude, "192.168.5.0/"));
  const char* tag = "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$";
  CHECK(find(tag, "pytorch-2.9-numpy2"));
  CHECK(find(tag, std::string(128, 'a')));
  CHECK_FALSE(find(tag, std::string(129, 'a')));
  CHECK_FALSE(find(tag, ".hidden"));
}

TEST_CASE("alternation, groups, quantifiers, anchors and classes") {
  CHECK(full("~|null|", ""));
  CHECK(full("~|null|", "null"));
  CHECK_FALSE(full("~|null|", "nul"));
  CHECK(full("a(b|c)*d", "abcbcd"));
  CHECK(full("(?:ab)+", "ababab"));
  CHECK_FALSE(full("(?:ab)+", "aba"));
  CHECK(full("x{2,}", "xxxx"));
  CHECK_FALSE(full("x{2,}", "x"));
  CHECK(full("x{3}", "xxx"));
  CHECK_FALSE(full("x{3}", "xxxx"));
  CHECK(full("a{,}", "a{,}"));  // not a counted repetition: literal braces
  CHECK(full("[^/]+", "abc"));
  CHECK_FALSE(full("[^/]+", "a/c"));
  CHECK(full(R"([\]a-]+)", "]-a"));
  CHECK(full(R"(\d+\.\d*)", "12."));
  CHECK(full(".", "\xc3"));  // bytes, as std::regex over char
  CHECK_FALSE(full(".", "\n"));
  CHECK(find("b$", "ab"));
  CHECK_FALSE(find("^b", "ab"));
  CHECK(find("", "anything"));
  CHECK(Pattern::literal("secret", true).search("MY_SECRET_KEY"));
  CHECK(Pattern::literal("[a-c]", true).matches("B"));
  CHECK_FALSE(Pattern::literal("[^a-c]", true).matches("B"));
}

TEST_CASE("invalid or unsupported patterns are refused with a reason") {
  std::string error;
  for (const char* bad :
       {"(", "a)", "[a", "*a", "a{3,2}", R"(\1)", R"(\b)", "(?=a)", "\\", "^*", "x{1001}"}) {
    INFO(bad);
    CHECK_FALSE(Pattern::compile(bad, &error));
    CHECK_FALSE(error.empty());
  }
  CHECK_THROWS(Pattern::literal("("));
  std::string nested(40, '(');
  CHECK_FALSE(Pattern::compile(nested + "a" + std::string(40, ')'), &error));
}

// std::regex recursed once per character here and overflowed the stack.
TEST_CASE("long inputs match in linear time without recursion") {
  const std::string digits(1'000'000, '7');
  CHECK(full(R"([+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?)", digits + "Gi"));
  CHECK_FALSE(full("[-+]?[0-9]+", digits + "x"));
  CHECK(find("^[A-Za-z0-9_]+$", std::string(1'000'000, 'm')));
  // The classic exponential case for backtracking engines.
  CHECK_FALSE(full("(a*)*b", std::string(100'000, 'a')));
  CHECK_FALSE(full("(a|aa)+$", std::string(100'000, 'a') + "!"));
}

}  // namespace
}  // namespace mlenv
