#pragma once
// Rules on what a user most likely did not mean (E0320-E0324, E0425-E0430, W0403-W0406): values
// the language accepts that would fail on the cluster, or do something else than they read.
// Each names the failure it prevents; a value that may be meant gets a warning, not an error.

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
};

/// Checks the merged value of one env (its cluster and image resolved). Findings about a
/// cluster or image value every env shares are reported once (`checked`).
void check_usage(const Value& env, const UsageContext& context, CheckedValues& checked,
                 Diagnostics& diagnostics);

/// E0430 across envs: in a Kubernetes namespace where some env waits in a queue, an env with
/// no queue bypasses the quota and the topology placement.
void check_queues(const ir::Program& program, Diagnostics& diagnostics);

/// Where `field` of `parent` was assigned (the entry `field = ...`), else where its value was
/// written: a value read through a reference (`storage = nfs.rwx`) was written in the
/// referenced declaration, but the user's choice is the assignment.
SourceRange assigned_at(const Value& parent, const char* field);

}  // namespace mlenv::check
