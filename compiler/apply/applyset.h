#pragma once
// ApplySet (KEP-3659) compatibility: one parent ConfigMap per env and a `part-of` label on every
// namespaced object, so `kubectl apply --prune --applyset` users see the same set mlenvc owns.

#include <set>
#include <string>
#include <string_view>

namespace mlenv::plan {

/// The parent object of an env's ApplySet.
struct ApplySetParent {
  std::string name;  ///< `applyset-<env>`
  std::string namespace_;
  std::string id;  ///< `applyset-<base64url(sha256(name.namespace.ConfigMap.))>-v1`
};

/// The parent of the env `env` planned from root file `source` into `namespace_`:
/// `applyset-<env>-<first 8 hex digits of sha256(source)>`, so two programs that both have an
/// env of that name in one namespace have two ApplySets and never prune each other's objects.
/// An empty `source` gives the name apply used before (`applyset-<env>`).
ApplySetParent applyset_parent(const std::string& env, const std::string& namespace_,
                               const std::string& source);

/// The parent called `name` in `namespace_` (its id computed as the KEP says).
ApplySetParent applyset_parent_named(const std::string& name, const std::string& namespace_);

/// `Kind.group` ("StatefulSet.apps"), or `Kind` for the core group, as the KEP spells it.
std::string group_kind(std::string_view api_version, std::string_view kind);

/// The parent ConfigMap as JSON, listing `group_kinds` in its contains-group-kinds annotation.
std::string applyset_parent_json(const ApplySetParent& parent,
                                 const std::set<std::string>& group_kinds);

/// The object of a one-document YAML file as JSON, with `labels` added to its metadata (and
/// nothing else changed). Quoted scalars stay strings; plain ones are typed as YAML 1.2 reads
/// them. Throws std::runtime_error when the text is not one mapping.
std::string object_json(const std::string& yaml, const std::string& label_key,
                        const std::string& label_value);

}  // namespace mlenv::plan
