#pragma once
// Values, lists, blocks and entries. Included only by expression.cc.

#include "compiler/parse/token_def.h"

namespace mlenv::parse {

struct expression_class : annotate_position {};
struct block_class : annotate_position {};
struct list_class : annotate_position {};
struct entry_class : annotate_position {};
struct entry_assign_class : annotate_position {};
struct entry_block_class : annotate_position {};
struct block_expression_class;
struct list_items_class;
struct block_entries_class;

const expression_type expression_rule = "value";
const block_type block_rule = "block";
const x3::rule<list_class, ast::List> list = "list";
const x3::rule<entry_class, ast::Entry> entry = "entry";
const x3::rule<entry_assign_class, ast::Entry> entry_assign = "entry";
const x3::rule<entry_block_class, ast::Entry> entry_block = "entry";
const x3::rule<block_expression_class, ast::Expr> block_expression = "block";
// Single-member structs take their container through a rule of their own (an X3 rule).
const x3::rule<list_items_class, std::vector<ast::Expr>> list_items = "list";
const x3::rule<block_entries_class, std::vector<ast::Entry>> block_entries = "block";

struct assign_op_ : x3::symbols<ast::Op> {
  assign_op_() { add("=", ast::Op::Assign)("+=", ast::Op::Append); }
};
const assign_op_ assign_op;
struct assign_class;
const x3::rule<assign_class, ast::Op> assign = "`=`, `+=` or `{`";
const auto assign_def = assign_op;

const auto separator = x3::lit(',') | x3::lit(';');
const auto final_marker = x3::matches[keyword("final") >> &x3::char_("A-Za-z_\"")];

const auto expression_rule_def = string_lit | number | list | block_rule | boolean | ref;
const auto list_items_def =
    nested{'['}['[' >> *(expression_rule >> *x3::lit(',')) >> x3::expect[']']];
const auto list_def = list_items;
const auto block_entries_def = nested{'{'}['{' >> *(entry >> *separator) >> x3::expect['}']];
const auto block_rule_def = block_entries;
const auto block_expression_def = block_rule;
const auto entry_block_def = final_marker >> key >> x3::attr(ast::Op::Assign) >> block_expression
                             >> x3::attr(true);
const auto entry_assign_def = final_marker >> key >> x3::expect[assign] >>
                              x3::expect[expression_rule] >> x3::attr(false);
// The lookahead picks the form before anything is parsed into the attribute: X3 does not
// undo a failed alternative's partial attribute, so the two forms must never backtrack.
const auto entry_def = (&(final_marker >> key >> '{') >> entry_block) | entry_assign;

BOOST_SPIRIT_DEFINE(expression_rule, block_rule, list, entry, entry_assign, entry_block,
                    block_expression, assign, list_items, block_entries)

}  // namespace mlenv::parse
