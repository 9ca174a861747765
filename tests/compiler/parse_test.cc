// The parser on in-memory text: trees, byte ranges, recovery and errors.

#include <catch2/catch.hpp>

#include "compiler/parse/parser.h"

namespace mlenv {
namespace {

struct Parsed {
  ast::File file;
  Diagnostics diagnostics;
};

Parsed parse(std::string_view text) {
  Parsed p;
  p.file = parse::parse_file(1, text, p.diagnostics);
  return p;
}

TEST_CASE("a declaration with nested blocks, lists, refs and extends") {
  std::string_view text = R"(import "std/profiles/h100"
/// The lab's cluster.
cluster barcelona extends h100.node4 {
  api = "barcelona.example.org"
  nodes = ["a", "b",]
  storage { mode = per_pod; workspace = 100Gi }
  final "nvidia.com/gpu" = 4
  tags += ["x"]
}
)";
  Parsed p = parse(text);
  REQUIRE(p.diagnostics.all().empty());
  REQUIRE(p.file.items.size() == 2);
  const auto& import = boost::get<ast::Import>(p.file.items[0]);
  REQUIRE(boost::get<std::string>(import.path.parts.at(0)) == "std/profiles/h100");
  const auto& decl = boost::get<ast::Decl>(p.file.items[1]);
  CHECK(decl.kind.name == "cluster");
  CHECK(decl.name.name == "barcelona");
  CHECK(decl.doc == "The lab's cluster.");
  REQUIRE(decl.extends.has_value());
  CHECK(decl.extends->path == std::vector<std::string>{"h100", "node4"});
  REQUIRE(decl.body.entries.size() == 5);
  CHECK(text.substr(decl.body.entries[0].begin,
                    decl.body.entries[0].end - decl.body.entries[0].begin) ==
        "api = \"barcelona.example.org\"");
  const auto& nodes = boost::get<ast::List>(decl.body.entries[1].value);
  CHECK(nodes.items.size() == 2);
  const auto& storage = decl.body.entries[2];
  CHECK(storage.block_form);
  const auto& storage_block = boost::get<ast::Block>(storage.value);
  REQUIRE(storage_block.entries.size() == 2);
  CHECK(boost::get<ast::Ref>(storage_block.entries[0].value).path ==
        std::vector<std::string>{"per_pod"});
  CHECK(boost::get<ast::Number>(storage_block.entries[1].value).text == "100Gi");
  CHECK(decl.body.entries[3].is_final);
  CHECK(decl.body.entries[3].key.quoted);
  CHECK(decl.body.entries[3].key.text == "nvidia.com/gpu");
  CHECK(decl.body.entries[4].op == ast::Op::Append);
}

TEST_CASE("strings decode escapes and split interpolations") {
  Parsed p = parse("env e { command = [\"a\\\"b\\u{e9}\\n ${cluster.api}!\"] }");
  REQUIRE(p.diagnostics.all().empty());
  const auto& decl = boost::get<ast::Decl>(p.file.items[0]);
  const auto& list = boost::get<ast::List>(decl.body.entries[0].value);
  const auto& s = boost::get<ast::StringLit>(list.items[0]);
  REQUIRE(s.parts.size() == 3);
  CHECK(boost::get<std::string>(s.parts[0]) == "a\"b\xc3\xa9\n ");
  CHECK(boost::get<ast::Interpolation>(s.parts[1]).ref.path ==
        std::vector<std::string>{"cluster", "api"});
  CHECK(boost::get<std::string>(s.parts[2]) == "!");
}

TEST_CASE("heredocs are raw and lose their common indentation") {
  Parsed p = parse("image i {\n  run = [<<EOT\n    echo ${HOME}\n      indented\n    EOT]\n}\n");
  REQUIRE(p.diagnostics.all().empty());
  const auto& decl = boost::get<ast::Decl>(p.file.items[0]);
  const auto& list = boost::get<ast::List>(decl.body.entries[0].value);
  const auto& s = boost::get<ast::StringLit>(list.items[0]);
  CHECK(s.heredoc);
  CHECK(boost::get<std::string>(s.parts[0]) == "echo ${HOME}\n  indented\n");
}

TEST_CASE("schemas and enums") {
  Parsed p = parse(R"(/// Doc.
schema gpus {
  /// How many.
  per_node: int(0..64) = 0
  product?: string(/^[A-Z]/)
  tags: list(string) = []
}
enum storage_mode { rwx, per_pod }
)");
  REQUIRE(p.diagnostics.all().empty());
  const auto& schema = boost::get<ast::Schema>(p.file.items[0]);
  REQUIRE(schema.fields.size() == 3);
  CHECK(schema.fields[0].doc == "How many.");
  const auto& range = boost::get<ast::Range>(schema.fields[0].type.args[0]);
  CHECK(range.low.value() == 0);
  CHECK(range.high.value() == 64);
  CHECK(schema.fields[1].optional);
  CHECK(boost::get<ast::Pattern>(schema.fields[1].type.args[0]).text == "^[A-Z]");
  CHECK(boost::get<ast::TypeExpr>(schema.fields[2].type.args[0]).name.name == "string");
  const auto& e = boost::get<ast::Enum>(p.file.items[1]);
  CHECK(e.members.size() == 2);
}

TEST_CASE("recovery reports an error in each broken declaration") {
  Parsed p =
      parse("cluster a {\n  api = = 3\n}\nimage b { from = \"x\" }\nenv c {\n  nodes 2\n}\n");
  REQUIRE(p.diagnostics.all().size() == 2);
  CHECK(p.diagnostics.all()[0].code == Code::E0101);
  CHECK(p.diagnostics.all()[0].message == "expected value, found `=`");
  CHECK(p.diagnostics.all()[1].message == "expected `=`, `+=` or `{`, found `2`");
  REQUIRE(p.file.items.size() == 1);
  CHECK(boost::get<ast::Decl>(p.file.items[0]).name.name == "b");
}

TEST_CASE("unterminated strings, bad escapes and deep nesting are clean errors") {
  CHECK(parse("env a { x = \"abc\n}").diagnostics.all().at(0).code == Code::E0102);
  CHECK(parse("env a { x = \"a\\q\" }").diagnostics.all().at(0).code == Code::E0103);
  CHECK(parse("env a { x = /* }").diagnostics.all().at(0).code == Code::E0102);
  CHECK(parse("env a { x = [<<EOT\nabc\n").diagnostics.all().at(0).code == Code::E0102);
  std::string deep = "env a { x = " + std::string(100, '[') + std::string(100, ']') + " }";
  CHECK(parse(deep).diagnostics.all().at(0).code == Code::E0104);
}

// Before the grammar counted nesting itself, a pre-scan that read strings and heredocs its own
// way let these through to the recursive grammar, which overflowed the stack (SIGSEGV).
TEST_CASE("nesting is limited by the grammar, whatever precedes the brackets") {
  const std::string brackets = std::string(20000, '[') + std::string(20000, ']');
  const std::string blocks = [] {
    std::string s;
    for (int i = 0; i < 20000; ++i) s += "{ a = ";
    return s;
  }();
  for (const std::string& prefix :
       {std::string("env a { x = \"\\\n  y = "), std::string("env a { x = <<EOT junk\n  y = "),
        std::string("env a { x = <<EOT\n  y = "), std::string("env a {\n  y = ")}) {
    for (const std::string& deep : {brackets, blocks}) {
      Parsed p = parse(prefix + deep + "\n}\nenv b { z = " + deep + " }\n");
      REQUIRE(!p.diagnostics.all().empty());
      bool too_deep = false;
      for (const Diagnostic& d : p.diagnostics.all()) too_deep |= d.code == Code::E0104;
      CHECK((too_deep || p.diagnostics.all().front().code != Code::E0101));
    }
  }
  // Type arguments nest too.
  std::string types = "schema s { f: ";
  for (int i = 0; i < 20000; ++i) types += "list(";
  CHECK(parse(types + "string").diagnostics.all().at(0).code == Code::E0104);
  // Exactly the limit parses.
  std::string ok = "env a { x = " + std::string(63, '[') + std::string(63, ']') + " }";
  CHECK(parse(ok).diagnostics.all().empty());
  std::string over = "env a { x = " + std::string(64, '[') + std::string(64, ']') + " }";
  CHECK(parse(over).diagnostics.all().at(0).code == Code::E0104);
}

TEST_CASE("an unterminated string is reported at its opening quote") {
  Parsed p = parse("env a {\n  x = \"abc\n  y = 2\n}\n");
  REQUIRE(p.diagnostics.all().size() == 1);
  CHECK(p.diagnostics.all()[0].code == Code::E0102);
  CHECK(p.diagnostics.all()[0].range.begin == 14);
  Parsed h = parse("env a {\n  x = <<EOT\n  abc\n");
  CHECK(h.diagnostics.all().at(0).range.begin == 14);
}

TEST_CASE("an unclosed bracket names where it opened") {
  Parsed p = parse("env a {\n  x = [1, 2\n  y = { z = 3\n");
  REQUIRE(p.diagnostics.all().size() == 1);
  const Diagnostic& d = p.diagnostics.all()[0];
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].message == "the unclosed `[` opened here");
  CHECK(d.notes[0].range.begin == 14);
}

TEST_CASE("an unclosed brace names where it opened") {
  // A declaration's block; a block value inside one (the innermost is named).
  for (const auto& [text, at] : {std::pair<std::string, std::size_t>{"env a {\n  x = 1\n", 6},
                                 {"env a {\n  y = { z = 3\n", 14}}) {
    Parsed p = parse(text);
    REQUIRE(p.diagnostics.all().size() == 1);
    const Diagnostic& d = p.diagnostics.all()[0];
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0].message == "the unclosed `{` opened here");
    CHECK(d.notes[0].range.begin == at);
  }
}

}  // namespace
}  // namespace mlenv
