#pragma once
// The grammar's API (Spirit's calc9/rexpr layout): rule types declared here, defined in the
// `*_def.h` headers, each instantiated by exactly one .cc file so the groups compile in
// parallel and the checker never recompiles the grammar.

#include <boost/spirit/home/x3.hpp>

#include "compiler/parse/ast_adapted.h"
#include "compiler/parse/config.h"

namespace mlenv::parse {

struct expression_class;
struct block_class;
struct item_class;

using expression_type = x3::rule<expression_class, ast::Expr>;
using block_type = x3::rule<block_class, ast::Block>;
using item_type = x3::rule<item_class, ast::Item>;

BOOST_SPIRIT_DECLARE(expression_type, block_type, item_type)

/// A value: string, heredoc, number, bool, list, block or reference.
const expression_type& expression();
/// `{ entries }`.
const block_type& block();
/// One top-level item: import, declaration, schema or enum.
const item_type& item();

}  // namespace mlenv::parse
