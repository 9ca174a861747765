#pragma once
// Deterministic JSON for boot.json, plan.json and JSON-valued annotations: keys in build
// order, two-space indentation (or compact), a final newline only for whole files.

#include <string>

#include "targets/common/value.h"

namespace mlenv::target {

/// Pretty JSON with two-space indentation and a trailing newline (a file).
std::string to_json_file(const Value& value);
/// Compact JSON on one line, for annotations and command-line flags.
std::string to_json_compact(const Value& value);

}  // namespace mlenv::target
