#pragma once
// Rules on the values that reach a Dockerfile, a Linux interface, an IPAM configuration or a
// Kubernetes label (E0312-E0319, E0420-E0422, E0431, E0432): what would otherwise break or change
// the meaning of the emitted text is refused at check.

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "compiler/check/value.h"
#include "compiler/diag/diagnostic.h"

namespace mlenv::check {

/// Values already checked: envs share their image's values, which are checked once.
using CheckedValues = std::unordered_set<const Value*>;

/// Checks the merged value of one env (its cluster and image resolved) and reports each rule
/// it breaks.
void check_hygiene(const Value& env, CheckedValues& checked, Diagnostics& diagnostics);

/// How many addresses whereabouts can hand out from a rail's `ipam` (its `range` less the
/// network and broadcast addresses and `exclude`), or nothing where `range` is missing or
/// invalid (reported elsewhere).
std::optional<std::uint64_t> whereabouts_addresses(const Value* ipam);

/// Whether the API server takes `name` as an extended resource (a GPU device plugin's).
bool is_extended_resource_name(std::string_view name);

}  // namespace mlenv::check
