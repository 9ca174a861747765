// Instantiates the declaration group of the grammar (declaration_def.h).

#include "compiler/parse/declaration_def.h"

namespace mlenv::parse {

BOOST_SPIRIT_INSTANTIATE(item_type, iterator_type, context_type)

const item_type& item() {
  return item_rule;
}

}  // namespace mlenv::parse
