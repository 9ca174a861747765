#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "targets/common/json_writer.h"
#include "targets/common/yaml_writer.h"

using mlenv::target::to_yaml;
using mlenv::target::Value;
using mlenv::target::yaml_needs_quotes;

TEST_CASE("strings YAML 1.1 would read as other types are quoted", "[yaml]") {
  for (const char* s : {"true", "yes", "on", "no", "off", "y", "n", "Y", "N", "null", "~", "",
                        "4", "-1", "0x1F", "0o17", "017", "1.5", ".5", "1e3", "12:30", ".inf",
                        "-.inf", ".nan", "2026-02-03", "2001-12-14t21:59:43.10-05:00", "=", "<<",
                        "- x", "-", "---", "a: b", "a #b", "#x", "*x", "&x", "!x", "|", ">", "@x",
                        "%x", "{a}", "[a]", " x", "x ", "x:", "\"x", "'x", "a\tb"}) {
    INFO(s);
    CHECK(yaml_needs_quotes(s));
  }
  for (const char* s : {"100Gi", "500m", "mlx5_2", "nvidia.com/gpu", "--provider=openshift",
                        "-x", "v1", "ml-dev-env", "pytorch-2.9-numpy2", "a:b", "http://x:8080",
                        "Retain", "mlx5_2,mlx5_3", "openshift.io/required-scc"}) {
    INFO(s);
    CHECK_FALSE(yaml_needs_quotes(s));
  }
}

TEST_CASE("the writer's output reads back as the same tree", "[yaml]") {
  Value doc = Value::map();
  doc.set("apiVersion", "v1");
  doc.set("port", 8080);
  doc.set("flag", true);
  doc.set("text", "on");
  doc.set("number", "29500");
  doc.set("empty", "");
  doc.set("emptyMap", Value::map());
  doc.set("emptySeq", Value::seq());
  doc.set("multi", "line one\n  indented\n\nlast\n");
  doc.set("noTrail", "a\nb");
  Value& list = doc.set("list", Value::seq());
  list.push(Value::map()).set("name", "a");
  Value& item = list.push(Value::map());
  item.set("name", "b");
  item.set("nested", Value::strings({"x", "true", "1"}));
  list.push(Value::strings({"inner"}));
  std::string text = to_yaml(doc);
  YAML::Node n = YAML::Load(text);
  CHECK(n["port"].as<int>() == 8080);
  CHECK(n["port"].Tag() == "?");
  CHECK(n["text"].as<std::string>() == "on");
  CHECK(n["text"].Tag() == "!");
  CHECK(n["number"].Tag() == "!");
  CHECK(n["empty"].as<std::string>() == "");
  CHECK(n["emptyMap"].IsMap());
  CHECK(n["emptySeq"].IsSequence());
  CHECK(n["multi"].as<std::string>() == "line one\n  indented\n\nlast\n");
  CHECK(n["noTrail"].as<std::string>() == "a\nb");
  CHECK(n["list"][1]["nested"][1].as<std::string>() == "true");
  CHECK(n["list"][1]["nested"][1].Tag() == "!");
  CHECK(n["list"][2][0].as<std::string>() == "inner");
  CHECK(to_yaml(doc) == text);  // deterministic
}

TEST_CASE("JSON output is stable and escaped", "[json]") {
  Value doc = Value::map();
  doc.set("b", "q\"\n");
  doc.set("a", Value::seq());
  doc.set("c", Value::strings({"x"}));
  CHECK(mlenv::target::to_json_compact(doc) == R"({"b":"q\"\n","a":[],"c":["x"]})");
  CHECK(mlenv::target::to_json_file(doc) == "{\n  \"b\": \"q\\\"\\n\",\n  \"a\": [],\n  \"c\": [\n    \"x\"\n  ]\n}\n");
}
