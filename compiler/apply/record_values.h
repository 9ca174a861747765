#pragma once
// Values mlenvc reads back from outside and passes to a client as an argument: the trailers of
// `refs/mlenv/applied/...` records (a ref anyone who can push may write) and the names of pods
// the cluster lists. Each must be a value mlenvc itself would write, never an option:
// `Slurm-Job: --me` made destroy cancel every job of the user, `ApplySet-Parent: --all` made
// apply delete every ConfigMap, and a pod named `--server=...` became a client option.

#include <string_view>

namespace mlenv::plan {

/// A Kubernetes object name as the API server allows it (RFC 1123 subdomain): 1..253 of
/// `a-z 0-9 - .`, starting and ending with a letter or digit. Pods, ConfigMaps, Secrets.
bool is_object_name(std::string_view name);

/// A batch job id as the scheduler prints it on submission: 1..20 digits.
bool is_slurm_job_id(std::string_view id);

/// Whether `name` may be passed as `--context=NAME`: 1 to 253 letters, digits and `._-:@/`,
/// not starting with `-` (`oc login` names contexts `<namespace>/<server>:<port>/<user>`).
bool valid_context_name(std::string_view name);

/// The value of the core's record trailer `key` (`ApplySet-Parent: `, `Runtime-Tree: `,
/// `Plan-Directory: `, `Image-Digest: `) is one mlenvc writes: an object name; a git object id
/// (40 or 64 hex digits); a relative path without `..`, a leading `-`, or control bytes; an
/// image by digest. Other keys accept nothing here: a provider validates its own trailers.
bool valid_trailer_value(std::string_view key, std::string_view value);

}  // namespace mlenv::plan
