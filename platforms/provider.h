#pragma once
// A platform as a provider, as Terraform's providers are (internal/providers/provider.go): the
// core (check, plan, the differ, apply's sequencing, the day-2 command line) knows no platform;
// it asks the provider of an env's platform, which owns rendering, change semantics, apply and
// the day-2 commands. registry.cc is the only list of providers (platforms/README.md says how
// to add one).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/program.h"

namespace mlenv::target {
class Target;
}
namespace mlenv::plan {
class ApplyDriver;
class PlanTree;
struct PlanDiff;
namespace day2 {
class Day2Driver;
}
}  // namespace mlenv::plan

namespace mlenv::platforms {

class Provider {
 public:
  virtual ~Provider() = default;
  /// The platform it provides (`platform = ...` in a cluster, plan.json's `platform`).
  virtual ir::Platform platform() const = 0;
  /// Its renderer and rules: the files and objects of its envs (platforms/target.h).
  virtual const target::Target& target() const = 0;

  // --- Change semantics: what the differ asks about a change of an env's objects. ---

  /// Whether objects of `kind` are a run's workload: one execution, applied once; any change
  /// to it is a new run (deleted, then created).
  virtual bool is_run_kind(std::string_view kind) const = 0;
  /// Why changing field `path` of an object of `kind` forces its replacement, or "" when the
  /// platform changes it in place. `object` is the new object by dotted path (yaml_fields.h),
  /// for rules that depend on it (a label that hands the object to another controller).
  virtual std::string replace_reason(std::string_view kind, std::string_view path,
                                     const std::map<std::string, std::string>& object) const = 0;
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

/// Whether any provider's shared objects of `kind` are an image's (Provider::is_image_kind).
bool is_image_kind(std::string_view kind);

}  // namespace mlenv::platforms
