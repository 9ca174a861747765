#include <catch2/catch.hpp>

#include "json.h"

using boot::Json;
using boot::parse_json;

TEST_CASE("json: parses every kind of value and writes it back the same", "[json]") {
  const char* text =
      R"({"a":1,"b":-2.5,"c":"x\"y\\z\n","d":[true,false,null],"e":{},"f":[],"g":1e3})";
  auto parsed = parse_json(text);
  REQUIRE(parsed.value);
  const Json& root = *parsed.value;
  CHECK(root.find("a")->as_int() == 1);
  CHECK(root.find("b")->as_number() == -2.5);
  CHECK(root.find("c")->as_string() == "x\"y\\z\n");
  CHECK(root.find("d")->as_array().size() == 3);
  CHECK(root.find("d")->as_array()[2].is_null());
  CHECK(root.find("g")->as_int() == 1000);
  CHECK(root.find("missing") == nullptr);
  auto again = parse_json(root.dump());
  REQUIRE(again.value);
  CHECK(*again.value == root);
  auto pretty = parse_json(root.pretty());
  REQUIRE(pretty.value);
  CHECK(*pretty.value == root);
}

TEST_CASE("json: keeps member order and replaces in place", "[json]") {
  Json object = Json::object();
  object.set("z", 1).set("a", 2).set("z", 3);
  CHECK(object.dump() == R"({"z":3,"a":2})");
}

TEST_CASE("json: decodes \\u escapes and surrogate pairs to UTF-8", "[json]") {
  auto parsed = parse_json(R"(["\u00e9\u20ac\ud83d\ude00\u0001"])");
  REQUIRE(parsed.value);
  CHECK(parsed.value->as_array()[0].as_string() == "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x01");
  CHECK(Json(std::string("\x01")).dump() == "\"\\u0001\"");
}

TEST_CASE("json: rejects malformed documents with an offset", "[json]") {
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "01", "tru", "\"abc", "{\"a\":1} x",
                          "{\"a\":1,\"a\":2}", "\"\\ud800\"", "1.", "-", "\"\t\""}) {
    INFO(bad);
    auto parsed = parse_json(bad);
    CHECK_FALSE(parsed.value);
    CHECK_FALSE(parsed.error.empty());
  }
  std::string deep(100, '[');
  CHECK_FALSE(parse_json(deep + std::string(100, ']')).value);
}

TEST_CASE("json: integers stay integers and fractions round-trip", "[json]") {
  CHECK(Json(29400).dump() == "29400");
  CHECK(Json(0.1).dump() == "0.1");
  CHECK(Json(1.0 / 3).as_number() == parse_json(Json(1.0 / 3).dump()).value->as_number());
  CHECK(Json(3).is_integer());
  CHECK_FALSE(Json(3.5).is_integer());
}

TEST_CASE("json: a number beyond a double's range is an error, not infinity", "[json]") {
  // Found by tests/fuzz/fuzz_boot: 2e22222 read as infinity and wrote back as null.
  for (const char* text : {"2e22222", "[1e400]", "{\"t\":-1e309}"}) {
    INFO(text);
    auto parsed = parse_json(text);
    CHECK_FALSE(parsed.value);
    CHECK(parsed.error == "number out of range");
  }
  auto tiny = parse_json("1e-400");  // underflow to zero is still a number
  REQUIRE(tiny.value);
  CHECK(tiny.value->as_number() == 0);
}
