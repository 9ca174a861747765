#include "compiler/syntax/ast.h"

namespace mlenv::ast {

const Located& located(const Expr& expr) {
  return boost::apply_visitor(
      // apply_visitor unwraps recursive_wrapper, so every alternative is a Located.
      [](const auto& node) -> const Located& { return node; }, expr);
}

}  // namespace mlenv::ast
