#pragma once
// Boost.Fusion views of the AST so X3 can fill it as rule attributes. Byte offsets (the
// Located base) are not adapted: the on_success handler sets them.

#include <boost/fusion/include/adapt_struct.hpp>

#include "compiler/syntax/ast.h"

BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Identifier, name)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Ref, path)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Number, text)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Bool, value)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::List, items)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Key, text, quoted)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Entry, is_final, key, op, value, block_form)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Block, entries)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Import, path, alias)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Decl, kind, name, extends, body)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Range, low, high)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Pattern, text)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::TypeExpr, name, args)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Field, name, optional, type, default_value)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Schema, name, fields)
BOOST_FUSION_ADAPT_STRUCT(mlenv::ast::Enum, name, members)
