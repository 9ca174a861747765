#pragma once
// The syntax tree of one `.mlenv` file: exactly what was written, with byte ranges, and
// nothing resolved. Produced by parse/, read by check/ and the formatter. Plain structs with
// boost::variant so the parser can fill them as attributes (no semantic actions).

#include <cstdint>
#include <string>
#include <vector>

#include <boost/optional.hpp>
#include <boost/variant.hpp>

namespace mlenv::ast {

/// Byte offsets [begin, end) of a node in its file, filled in by the parser.
struct Located {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

struct Identifier : Located {
  std::string name;
};

/// `a.b.c`: a declaration, optionally qualified, then field names.
struct Ref : Located {
  std::vector<std::string> path;
};

/// `${a.b}` inside a string.
struct Interpolation : Located {
  Ref ref;
};

/// A string literal: literal chunks (escapes already decoded) and interpolations.
struct StringLit : Located {
  std::vector<boost::variant<std::string, Interpolation>> parts;
  bool heredoc = false;
};

/// A number as written (`4`, `100Gi`, `1h30m`): the field's type decides how to read it.
struct Number : Located {
  std::string text;
};

struct Bool : Located {
  bool value = false;
};

struct List;
struct Block;

using Expr = boost::variant<StringLit, Number, Bool, Ref, boost::recursive_wrapper<List>,
                            boost::recursive_wrapper<Block>>;

struct List : Located {
  std::vector<Expr> items;
};

/// A field name: an identifier, or a string for keys such as `"nvidia.com/gpu"`.
struct Key : Located {
  std::string text;
  bool quoted = false;
};

enum class Op : std::uint8_t { Assign, Append };

/// `[final] key = value`, `key += value`, or `key { ... }` (an Assign of a Block).
struct Entry : Located {
  bool is_final = false;
  Key key;
  Op op = Op::Assign;
  Expr value;
  bool block_form = false;  ///< written `key { }` rather than `key = { }`
};

struct Block : Located {
  std::vector<Entry> entries;
};

/// `import "PATH" [as NAME]`.
struct Import : Located {
  StringLit path;
  boost::optional<Identifier> alias;
};

/// `KIND NAME [extends REF] BLOCK`.
struct Decl : Located {
  Identifier kind;
  Identifier name;
  boost::optional<Ref> extends;
  Block body;
  std::string doc;  ///< the `///` lines directly above, filled in after parsing
};

/// `1..16`, `0..`: bounds of an `int` refinement.
struct Range : Located {
  boost::optional<std::int64_t> low;
  boost::optional<std::int64_t> high;
};

/// `/regex/` of a `string` refinement.
struct Pattern : Located {
  std::string text;
};

struct TypeExpr;
using TypeArg = boost::variant<boost::recursive_wrapper<TypeExpr>, Range, Pattern>;

/// `string`, `int(1..16)`, `list(string)`, `map(int)`, `string(/re/)`, a schema or enum name.
struct TypeExpr : Located {
  Identifier name;
  std::vector<TypeArg> args;
};

/// `NAME ["?"] ":" TYPE ["=" DEFAULT]` in a schema.
struct Field : Located {
  Identifier name;
  bool optional = false;
  TypeExpr type;
  boost::optional<Expr> default_value;
  std::string doc;
};

struct Schema : Located {
  Identifier name;
  std::vector<Field> fields;
  std::string doc;
};

struct Enum : Located {
  Identifier name;
  std::vector<Identifier> members;
  std::string doc;
};

using Item = boost::variant<Import, Decl, Schema, Enum>;

/// One parsed file. Items that failed to parse are absent (their errors were reported).
struct File {
  std::vector<Item> items;
  std::vector<Located> comments;  ///< every comment, in order, for the formatter
};

/// Byte range of any expression.
const Located& located(const Expr& expr);

}  // namespace mlenv::ast
