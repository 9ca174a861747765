// Instantiates the expression group of the grammar (expression_def.h).

#include "compiler/parse/expression_def.h"

namespace mlenv::parse {

BOOST_SPIRIT_INSTANTIATE(expression_type, iterator_type, context_type)
BOOST_SPIRIT_INSTANTIATE(block_type, iterator_type, context_type)

const expression_type& expression() {
  return expression_rule;
}
const block_type& block() {
  return block_rule;
}

}  // namespace mlenv::parse
