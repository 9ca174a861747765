#pragma once
// Rules on what a user most likely did not mean (E0320-E0324, E0425-E0428, W0403, W0404,
// W0406): values the language accepts that would fail on the cluster, or do something else than
// they read. Each names the failure it prevents; a value that may be meant gets a warning, not
// an error. A platform's own such rules are its provider's (platform_rules.h).

#include <string>

#include "compiler/base/source.h"
#include "compiler/check/rules_hygiene.h"
#include "compiler/check/value.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/ir/program.h"

namespace mlenv::check {

/// What the usage rules read of one env besides its merged value.
struct UsageContext {
  const std::string& name;  ///< the env's name
  SourceRange name_range;   ///< where the env is declared
  bool in_pods;  ///< its platform runs it in pods, not on the hosts (PlatformRules::on_hosts)
};

/// Checks the merged value of one env (its cluster and image resolved). Findings about a
/// cluster or image value every env shares are reported once (`checked`).
void check_usage(const Value& env, const UsageContext& context, CheckedValues& checked,
                 Diagnostics& diagnostics);

}  // namespace mlenv::check
