#pragma once
// Fields the API server refuses to change in place: a change to one of them makes the object
// a `-/+ replace` in the plan, and apply deletes the old object before applying the new one.

#include <string>
#include <string_view>

namespace mlenv::plan {

/// Why changing field `path` of an object of `kind` forces replacement, or "" if it does not.
/// `run`: the object is a run's workload (its platform's RunWorkload kind), one execution:
/// applied once, and any change of its spec is a new run (deleted, then created).
std::string replace_reason(std::string_view kind, std::string_view path, bool run);

}  // namespace mlenv::plan
