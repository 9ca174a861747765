#pragma once
// Top-level items: imports, declarations, schemas, enums and schema types. Included only by
// declaration.cc; values and blocks come from the expression group through its accessors.

#include "compiler/parse/token_def.h"

namespace mlenv::parse {

struct item_class : annotate_position {};
struct import_class : annotate_position {};
struct decl_class : annotate_position {};
struct schema_class : annotate_position {};
struct enum_class : annotate_position {};
struct field_class : annotate_position {};
struct type_class : annotate_position {};
struct type_arg_class;
struct range_class : annotate_position {};
struct pattern_class : annotate_position {};

const item_type item_rule = "declaration";
const x3::rule<import_class, ast::Import> import_decl = "import";
const x3::rule<decl_class, ast::Decl> decl = "declaration";
const x3::rule<schema_class, ast::Schema> schema_decl = "schema";
const x3::rule<enum_class, ast::Enum> enum_decl = "enum";
const x3::rule<field_class, ast::Field> field = "schema field";
const x3::rule<type_class, ast::TypeExpr> type_expr = "type";
const x3::rule<type_arg_class, ast::TypeArg> type_arg = "type argument";
const x3::rule<range_class, ast::Range> range = "range";
const x3::rule<pattern_class, ast::Pattern> pattern = "pattern";

const auto value = expression();
const auto body = block();
const auto item_separator = x3::lit(',') | x3::lit(';');

const auto item_rule_def = import_decl | schema_decl | enum_decl | decl;
const auto import_decl_def = keyword("import") >> x3::expect[string_lit] >>
                             -(keyword("as") >> x3::expect[identifier]);
const auto schema_decl_def = keyword("schema") >> x3::expect[identifier] >> x3::expect['{'] >>
                             *(field >> *item_separator) >> x3::expect['}'];
const auto enum_decl_def = keyword("enum") >> x3::expect[identifier] >> x3::expect['{'] >>
                           *(identifier >> *item_separator) >> x3::expect['}'];
const auto decl_def = identifier >> x3::expect[identifier] >>
                      -(keyword("extends") >> x3::expect[ref]) >> x3::expect[body];
const auto field_def = identifier >> x3::matches['?'] >> x3::expect[':'] >> x3::expect[type_expr] >>
                       -('=' >> x3::expect[value]);
const auto type_expr_def =
    identifier >> -nested{'('}['(' >> x3::expect[type_arg % ','] >> x3::expect[')']];
const auto type_arg_def = range | pattern | type_expr;
const auto range_def = -x3::long_long >> ".." >> -x3::long_long;
const auto pattern_def =
    x3::lexeme['/' >> x3::raw[*((x3::lit('\\') >> x3::char_) | ~x3::char_("/\n"))] >> '/'];

BOOST_SPIRIT_DEFINE(item_rule, import_decl, decl, schema_decl, enum_decl, field, type_expr,
                    type_arg, range, pattern)

}  // namespace mlenv::parse
