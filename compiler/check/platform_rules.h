#pragma once
// The seam between the language's rules and a platform's: the fields a platform has, and its
// rules on an env's values (what it needs, what it cannot run). compiler/check names no
// platform; each provider implements PlatformRules in its own folder (targets/README.md), and
// check_program is given every provider's. The platforms library depends on this header, never
// the other way round.

#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "compiler/base/source.h"
#include "compiler/check/check.h"
#include "compiler/check/rules_hygiene.h"
#include "compiler/check/value.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/ir/program.h"

namespace mlenv::check {

/// A field that only some platforms have, as a path below the cluster or the env. A field some
/// platform lists is E0418 on a cluster of every platform that does not.
struct PlatformField {
  bool on_env;                              ///< below the env, else below its cluster
  std::initializer_list<const char*> path;  ///< of a static array's element: lives as long
};

/// What a platform's rules read of one env.
struct PlatformEnv {
  const Value& env;
  const Value& cluster;  ///< never missing: the rules skip an env without a cluster
  const Value* rdma;     ///< the cluster's rails, when it has any
  const std::string& name;
  bool uses_rdma;  ///< `network = rdma`, or `auto` on a cluster with rails
  CheckedValues& checked;

  /// True the first time `value` is seen: a cluster's value is shared by its envs.
  bool first(const Value* value) const { return value && checked.insert(value).second; }
};

/// Reports a platform's findings about an env: E0418 and E0419 in the words every platform
/// shares, each once per source place (every env on a cluster would repeat them).
class PlatformReport {
 public:
  PlatformReport(const PlatformEnv& env, ir::Platform platform, std::set<std::string>& reported,
                 Diagnostics& diagnostics)
      : env_(env), platform_(platform), reported_(reported), diagnostics_(diagnostics) {}

  /// E0418: `field` does not apply on the platform. `from`: where the value was declared, when
  /// `at` is the assignment that chose it.
  void not_applicable(const std::string& field, const SourceRange& at, const Value* from = nullptr);
  /// E0419: the platform needs `field`, `why`. The diagnostic, for further notes; nullptr
  /// where it was reported at `at` already.
  Diagnostic* missing(const std::string& field, const SourceRange& at, const std::string& why);
  /// True the first time `field` at `at` is reported, for a platform's own codes.
  bool first(const std::string& field, const SourceRange& at);
  /// Where a platform reports its own codes.
  Diagnostics& diagnostics() const { return diagnostics_; }

 private:
  const PlatformEnv& env_;
  ir::Platform platform_;
  std::set<std::string>& reported_;
  Diagnostics& diagnostics_;
};

/// A platform's rules, asked by Checker::check_rules for every env of its clusters.
class PlatformRules {
 public:
  virtual ~PlatformRules() = default;
  /// The platform whose clusters these rules check.
  virtual ir::Platform platform() const = 0;
  /// The fields only some platforms have that this one has.
  virtual std::vector<PlatformField> fields() const = 0;
  /// Whether its envs run on the nodes' hosts (batch jobs, local processes) rather than in
  /// pods: then the rules of pods (names, interfaces, restarts, a rail's attachment) do not
  /// apply to them.
  virtual bool on_hosts() const { return false; }
  /// Checks one env of its clusters: what the platform needs, and what it cannot run.
  virtual void check(const PlatformEnv& env, PlatformReport& report) const = 0;
  /// Checks the rules across the envs of its clusters in a checked program.
  virtual void check_program(const ir::Program& program, Diagnostics& diagnostics) const;
};

/// E0418 on what an env that runs on hosts (not in pods) has no place for, where it differs
/// from the default: storage classes and memlock (the nodes' own), Routes and their proxies,
/// debugpy's port-forward (unless `debug_on_localhost`: the debugger runs on the same machine
/// and reaches 127.0.0.1:5678 itself), pod restarts and cleanup, labels on objects, and a
/// rail's attachment (the host's interface is the rail: seeds/004, RDMA guide).
void report_host_fields(const PlatformEnv& env, PlatformReport& report,
                        bool debug_on_localhost = false);

/// The fields an env on the hosts has no place for (Slurm's and local's E0418, where set), in
/// the order report_host_fields reports them; the language server offers none of them there.
std::vector<PlatformField> host_fields();

}  // namespace mlenv::check
