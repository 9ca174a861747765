#pragma once
// Rules on the values that reach a Dockerfile, a Linux interface, an IPAM configuration or a
// Kubernetes label (E0312-E0319, E0420-E0422): what would otherwise break or change the
// meaning of the emitted text is refused at check.

#include <unordered_set>

#include "compiler/check/value.h"
#include "compiler/diag/diagnostic.h"

namespace mlenv::check {

/// Values already checked: envs share their image's values, which are checked once.
using CheckedValues = std::unordered_set<const Value*>;

/// Checks the merged value of one env (its cluster and image resolved) and reports each rule
/// it breaks.
void check_hygiene(const Value& env, CheckedValues& checked, Diagnostics& diagnostics);

}  // namespace mlenv::check
