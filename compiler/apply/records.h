#pragma once
// The records apply keeps: `refs/mlenv/applied/<cluster>/<env>` (and `applied-admin/` for
// --admin), one commit per apply or destroy whose tree is the env directory applied (empty
// after a destroy) and whose trailers say what it was built and labelled with.

#include <string>

#include "compiler/apply/env_plan.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/plan/git_repo.h"

namespace mlenv::plan {

/// The trailer naming the env directory a record was applied from, relative to the work tree.
inline constexpr std::string_view kPlanDirTrailer = "Plan-Directory: ";
/// The trailer naming the tree id of `_runtime/` a record was built with.
inline constexpr std::string_view kRuntimeTrailer = "Runtime-Tree: ";
/// The trailer naming the ApplySet parent ConfigMap whose id labels the record's objects.
inline constexpr std::string_view kParentTrailer = "ApplySet-Parent: ";

/// The trailer naming the image, by digest, that the record's workloads ran (where apply
/// pushed it): a later apply that rebuilds nothing runs the same digest.
inline constexpr std::string_view kImageTrailer = "Image-Digest: ";

/// `refs/mlenv/applied/`, or `refs/mlenv/applied-admin/` for --admin.
const char* applied_refs(bool admin);

/// A trailer of the core's (`Plan-Directory: `, `ApplySet-Parent: `, `Runtime-Tree: `,
/// `Image-Digest: `) in a record's message: the first line starting with `key`; "" when none,
/// or when its value is not one mlenvc writes (valid_trailer_value), since the value reaches a
/// client as an argument. Any other key reads "": a provider's trailers are its own.
std::string trailer(const std::string& message, std::string_view key);

/// The value of trailer `key` as the record holds it, unchecked: the first line of `message`
/// that starts with `key`, "" when none. Providers write their own trailers through
/// record_applied (`Slurm-Job: `, `Local-Sessions: `), which the core stores as it stores any
/// text, and read them back with this, each validating its own values before they reach a
/// client (slurm_trailer, recorded_session_ids), as Terraform providers own their resources'
/// state.
std::string raw_trailer(const std::string& message, std::string_view key);

/// Reads what `refs/mlenv/applied[-admin]/<env.unit>` recorded of `env`: its files, plan.json
/// and trailers. A record of a destroyed env (an empty tree) reads as none.
void load_applied_record(Repository& repo, bool admin, EnvPlan& env);

/// Records that `env`'s plan directory, as committed at `head`, was applied (a commit of that
/// tree on the env's ref, by compare-and-swap against the record read at load; E0708).
/// `trailers` (lines of `Key: value\n`) are added to the record's message.
bool record_applied(Repository& repo, const EnvPlan& env, bool admin, const ObjectId& head,
                    const ObjectId& head_tree, Diagnostics& diagnostics,
                    const std::string& trailers = "");

/// Records that every object of `env`'s last record was deleted: a commit of the empty tree on
/// its ref, `why` in the message (E0708 when the ref moved).
bool record_destroyed(Repository& repo, const EnvPlan& env, bool admin, const std::string& why,
                      Diagnostics& diagnostics);

}  // namespace mlenv::plan
