#pragma once
// The one reader of resource quantities (`128Gi`, `500m`, `2e9`): the checker's type check,
// its rules and lowering, and the OpenAPI validation of emitted objects all read them here, so
// that a quantity check accepts is a quantity every later phase reads the same way.

#include <cstdint>
#include <optional>
#include <string_view>

namespace mlenv {

/// The value of a Kubernetes resource quantity (k8s.io/apimachinery/pkg/api/resource,
/// quantity.go): an optional sign, digits with an optional fraction (`1`, `1.5`, `.5`, `5.`),
/// then a binary suffix (`Ki Mi Gi Ti Pi Ei`), a decimal one (`n u m k M G T P E`) or a
/// decimal exponent (`e9`, `E-3`). nullopt where `text` is not one. Exact for every value a
/// long double holds exactly (`100Gi` equals `102400Mi`, `1.1G` equals `1100M`); huge inputs
/// saturate to infinity instead of overflowing.
std::optional<long double> parse_quantity(std::string_view text);

/// Whether `text` is a quantity `parse_quantity` reads.
bool is_quantity(std::string_view text);

/// A quantity as a whole number of bytes (or cores, ...): fractions round up, as Kubernetes'
/// `Quantity.Value()` does, negative values read as 0 and huge ones saturate at INT64_MAX.
/// nullopt where `text` is not a quantity.
std::optional<std::int64_t> quantity_integer(std::string_view text);

}  // namespace mlenv
