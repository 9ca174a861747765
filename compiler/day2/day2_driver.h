#pragma once
// What a provider's day-2 driver does for one applied env of its platform. The command line
// (compiler/driver/cmd_*.cc) and commands.cc resolve the env and ask the driver of its
// platform (targets/provider.h); only the driver knows the platform's clients.

#include <optional>
#include <ostream>

#include "compiler/apply/results.h"
#include "compiler/day2/applied_env.h"
#include "compiler/day2/commands.h"
#include "compiler/diag/diagnostic.h"
#include "targets/common/plan_json.h"

namespace mlenv::plan::day2 {

class Day2Driver {
 public:
  virtual ~Day2Driver() = default;
  /// `status` of `env`: its ranks and what else the platform shows; false when something could
  /// not be read (diagnostics reported).
  virtual bool status(AppliedEnv env, const EnvRequest& request, std::ostream& out,
                      Diagnostics& diagnostics) const = 0;
  /// Whether `logs` reads what outlives the env (files on disk), so that it serves a destroyed
  /// env too (AppliedEnv::destroyed); pods' logs go with the pods.
  virtual bool logs_outlive_env() const { return false; }
  /// `logs`: each rank's log, every line prefixed `[rank] `. Returns the exit status.
  virtual int logs(AppliedEnv env, const LogsRequest& request, std::ostream& out,
                   Diagnostics& diagnostics) const = 0;
  /// `shell`: a login shell where rank N runs, on the user's terminal.
  virtual int shell(AppliedEnv env, const ShellRequest& request,
                    Diagnostics& diagnostics) const = 0;
  /// `sync`: the directory's contents into the env's /workspace (request.dir is a directory).
  virtual int sync(AppliedEnv env, const SyncRequest& request, std::ostream& out,
                   Diagnostics& diagnostics) const = 0;
  /// `port-forward`: localhost to a port of rank 0.
  virtual int port_forward(AppliedEnv env, const PortForwardRequest& request,
                           Diagnostics& diagnostics) const = 0;
  /// `urls`: what the env exposes.
  virtual int urls(AppliedEnv env, const EnvRequest& request, std::ostream& out,
                   Diagnostics& diagnostics) const = 0;
  /// `dev-session`: sync --watch while debugpy is forwarded (request.dir is a directory).
  virtual int dev_session(AppliedEnv env, const DevSessionRequest& request, std::ostream& out,
                          Diagnostics& diagnostics) const = 0;
  /// `results`: rank 0's results.json of the last run of `env` (its plan.json committed at
  /// HEAD), or where it was looked for; nullopt when it could not be looked for (diagnostics
  /// reported).
  virtual std::optional<ResultsSource> results(const PlanManifest& env,
                                               const ResultsRequest& request,
                                               Diagnostics& diagnostics) const = 0;
};

}  // namespace mlenv::plan::day2
