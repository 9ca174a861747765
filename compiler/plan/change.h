#pragma once
// The plan model: what would change, by address, as Terraform shows it. Produced by the
// differ, rendered by summary.h, read by apply to decide replacements.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mlenv::plan {

/// Keep: a claim that leaves the plan with its env (the env was removed, or a StatefulSet's pods
/// leave it) stays on the cluster with its data; apply deletes it only with --allow-destroy.
enum class Action { Create, Update, Replace, Delete, Keep };

/// One field of an object, by dotted path; `before` is unset for an added field, `after` for a
/// removed one.
struct FieldChange {
  std::string path;
  std::optional<std::string> before;
  std::optional<std::string> after;
};

/// One object that changes. Addresses are `<cluster>/<env>/<Kind>/<name>`, or
/// `<cluster>/_admin/<Kind>/<name>` for cluster-scoped objects.
struct Change {
  std::string address;
  std::string kind;
  Action action = Action::Update;
  std::vector<FieldChange> fields;  ///< for Update and Replace, sorted by path
  std::string reason;               ///< for Replace: the field that cannot change in place
  std::string file;                 ///< the object's file, relative to the plan directory
  /// A Delete or Replace that destroys data (a claim): apply refuses it without
  /// `--allow-destroy=<address>`.
  bool destroys_data = false;
  /// An object the cluster names and every env of the namespace holds a copy of (an SR-IOV
  /// attachment, the cluster's ServiceAccount): shown once, as `<cluster>/_shared/<Kind>/<name>`.
  bool shared = false;
  /// What the reviewer should know beyond the fields: the claims a StatefulSet's pods leave.
  std::vector<std::string> notes;
};

/// Whether deleting an object of `kind` destroys data: claims, volumes, namespaces.
bool holds_data(const std::string& kind);

/// Whether objects of `kind` are an admission policy that grants pods privileges, as the
/// platform whose kind it is says (targets/provider.h).
bool grants_privileges(const std::string& kind);

/// Whether apply deletes or replaces an object only when `--allow-destroy=ADDRESS` names it:
/// one that holds data (holds_data), an admission policy (grants_privileges), an object of
/// `_admin` (the platform team's) or one the envs of a namespace share. The one rule the plan's
/// marks and apply's refusals (E0704) both follow.
bool needs_allow_destroy(const std::string& kind, bool admin, bool shared);

/// Whether an object of `kind` is kept, not deleted, when its env leaves the cluster (`mlenvc
/// destroy`, or the env removed from the plan) and --allow-destroy does not name it: a claim,
/// with its data, and an object the cluster's envs share (`shared`: its rails' attachments,
/// its claims, its service account) but an image's, which goes with the last env that runs it.
/// The workload and everything else go, so freeing the GPUs never deletes the cluster's own.
bool kept_when_env_leaves(const std::string& kind, bool shared = false);

/// `--allow-destroy=<address>`: what apply needs to delete or replace the object at `address`.
std::string allow_destroy_flag(const std::string& address);

/// Whether `address` is a `<cluster>/_admin/...` address.
bool is_admin_address(const std::string& address);

/// The flag a change needs from apply (allow_destroy_flag of its address), or "" when it needs
/// none: a delete or replace of an object needs_allow_destroy names, and a kept claim (the flag
/// that would delete it).
std::string required_flag(const Change& change);

/// A file of the plan that is not an object (Dockerfile, boot.json) and changes. An update
/// says what changed inside: the fields of a JSON file, else the changed lines.
struct FileChange {
  std::string path;
  Action action = Action::Update;
  std::vector<FieldChange> fields;  ///< a JSON file's changed fields, sorted by path
  std::vector<std::string> lines;   ///< another file's changed lines (content_diff.h)
};

/// Everything that differs between two plans.
struct PlanDiff {
  std::vector<Change> changes;     ///< sorted by address
  std::vector<FileChange> files;   ///< sorted by path
  std::size_t inputs_changed = 0;  ///< env dirs whose only change is plan.json (input digests)
  /// Env copies of shared objects that came or went with their envs, the objects unchanged.
  std::size_t shared_copies = 0;
  /// A file of `_runtime/` changed: mlenv-boot's sources, which every image mlenvc builds
  /// holds, so providers rebuild them (set before any env is diffed).
  bool runtime_changed = false;

  std::size_t count(Action action) const;
  /// True when the two plans are byte-for-byte equal.
  bool empty() const {
    return changes.empty() && files.empty() && inputs_changed == 0 && shared_copies == 0;
  }
};

/// "create", "update", "replace", "delete", "keep".
const char* action_name(Action action);

}  // namespace mlenv::plan
