#pragma once
// A platform as a provider, as Terraform's providers are (internal/providers/provider.go): the
// core (check, plan, the differ, apply's sequencing, the day-2 command line) knows no platform;
// it asks the provider of an env's platform, which owns rendering, change semantics, apply and
// the day-2 commands. registry.cc is the only list of providers (targets/README.md says how
// to add one).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/program.h"
#include "targets/common/openapi.h"

namespace mlenv::check {
class PlatformRules;
}
namespace mlenv::target {
class Target;
class DigestText;
}  // namespace mlenv::target
namespace mlenv::plan {
class ApplyDriver;
class PlanTree;
struct PlanDiff;
struct PlanObject;
struct PlanAction;
namespace day2 {
class Day2Driver;
}
}  // namespace mlenv::plan

namespace mlenv::target {

class Provider {
 public:
  virtual ~Provider() = default;
  /// The platform it provides (`platform = ...` in a cluster, plan.json's `platform`).
  virtual ir::Platform platform() const = 0;
  /// Its renderer and rules: the files and objects of its envs (targets/target.h).
  virtual const target::Target& target() const = 0;
  /// Its rules at check: the fields its clusters and envs have and need, and its rules on
  /// their values (compiler/check/platform_rules.h), which `mlenvc check` runs on every env.
  virtual const check::PlatformRules& rules() const = 0;

  // --- Change semantics: what the differ asks about a change of an env's objects. ---

  /// Whether objects of `kind` are a run's workload: one execution, applied once; any change
  /// to it is a new run (deleted, then created).
  virtual bool is_run_kind(std::string_view kind) const = 0;
  /// Why changing field `path` of an object of `kind` forces its replacement, or "" when the
  /// platform changes it in place. `object` is the new object by dotted path (yaml_fields.h),
  /// for rules that depend on it (a label that hands the object to another controller).
  virtual std::string replace_reason(std::string_view kind, std::string_view path,
                                     const std::map<std::string, std::string>& object) const = 0;
  /// Whether objects of `kind` are an admission policy of the platform's, which grants pods
  /// privileges: apply deletes or replaces one only when --allow-destroy names it
  /// (compiler/plan/change.h needs_allow_destroy). None unless the platform has such a kind.
  virtual bool grants_privileges(std::string_view) const { return false; }
  /// What the changes of env directory `unit` do beyond their fields, from the unit's `paths`
  /// that differ between `before` and `after`: notes and replacements on the changes the
  /// differ found for the unit's objects (the last ones of `diff`), and changes that are no
  /// object's (Slurm's job).
  virtual void diff_unit(const plan::PlanTree& before, const plan::PlanTree& after,
                         const std::string& unit, const std::vector<std::string>& paths,
                         plan::PlanDiff& diff) const = 0;
  /// Whether a shared object of `kind` is an image's (the envs that run one image share it):
  /// the last env that runs the image takes it along, with no --allow-destroy.
  virtual bool is_image_kind(std::string_view) const { return false; }

  /// What its admission webhooks refuse beyond its objects' schemas (targets/common/openapi.h),
  /// which `mlenvc build --openapi` and the tests' validator run after the schema; none unless
  /// it has such webhooks.
  virtual openapi::AdmissionRules admission_rules() const { return nullptr; }

  // --- plan.json (targets/common/plan_json.h): what only this platform knows of it. ---

  /// Adds the env fields only this platform reads to `text`, what plan.json's `inputs_sha256`
  /// digests. Every env's digest holds every provider's fields, whatever its platform, so that
  /// the digest of a committed plan does not depend on which platform reads a field.
  virtual void add_own_digest_fields(const ir::Env& /*env*/, target::DigestText& /*text*/) const {}
  /// Adds to `actions` what apply did after `object` of a plan.json written before plan.json
  /// listed its actions (`actions`), so that such a plan still applies as it did.
  virtual void add_implied_actions(const plan::PlanObject& /*object*/,
                                   std::vector<plan::PlanAction>& /*actions*/) const {}

  // --- Drivers: what runs against the cluster. ---

  /// Applies and destroys its envs. Providers that share a client (OpenShift and Kubernetes)
  /// share one driver, which apply hands all their envs at once.
  virtual const plan::ApplyDriver& apply() const = 0;
  /// The day-2 commands (status, logs, shell, sync, port-forward, urls, results) of its envs.
  virtual const plan::day2::Day2Driver& day2() const = 0;
};

/// The provider of `platform`: every platform has one.
const Provider& provider(ir::Platform platform);

/// Every provider, in the order of ir::Platform (the order of merged outputs and of apply).
const std::vector<const Provider*>& providers();

/// Every provider's rules(), in the same order: what check::check_program is given, since
/// compiler/check names no platform.
const std::vector<const check::PlatformRules*>& check_rules();

/// Every provider's admission_rules(), where it has some.
std::vector<openapi::AdmissionRules> admission_rules();

/// Whether any provider's shared objects of `kind` are an image's (Provider::is_image_kind).
bool is_image_kind(std::string_view kind);

}  // namespace mlenv::target
