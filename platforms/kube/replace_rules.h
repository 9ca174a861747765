#pragma once
// Fields the API server refuses to change in place: a change to one of them makes the object
// a `-/+ replace` in the plan, and apply deletes the old object before applying the new one.

#include <string>
#include <string_view>

namespace mlenv::plan {

/// Whether `kind` is a run's workload: a Job (OpenShift) or a JobSet (Kubernetes). A run is one
/// execution: applied once, and any change to it is a new run (deleted, then created).
bool is_run_kind(std::string_view kind);

/// Why changing field `path` of an object of `kind` forces replacement, or "" if it does not.
std::string replace_reason(std::string_view kind, std::string_view path);

}  // namespace mlenv::plan
