#pragma once
// The day-2 driver of the platforms whose envs are pods (OpenShift and Kubernetes): every
// command through the user's own oc or kubectl (session.h), on the env's rank pods.

#include "compiler/day2/day2_driver.h"

namespace mlenv::plan::day2 {

class KubeDay2Driver : public Day2Driver {
 public:
  bool status(AppliedEnv env, const EnvRequest& request, std::ostream& out,
              Diagnostics& diagnostics) const override;
  int logs(AppliedEnv env, const LogsRequest& request, std::ostream& out,
           Diagnostics& diagnostics) const override;
  int shell(AppliedEnv env, const ShellRequest& request, Diagnostics& diagnostics) const override;
  int sync(AppliedEnv env, const SyncRequest& request, std::ostream& out,
           Diagnostics& diagnostics) const override;
  int port_forward(AppliedEnv env, const PortForwardRequest& request,
                   Diagnostics& diagnostics) const override;
  int urls(AppliedEnv env, const EnvRequest& request, std::ostream& out,
           Diagnostics& diagnostics) const override;
  int dev_session(AppliedEnv env, const DevSessionRequest& request, std::ostream& out,
                  Diagnostics& diagnostics) const override;
  /// Rank 0's pod log, through the platform's client.
  std::optional<ResultsSource> results(const PlanManifest& env, const ResultsRequest& request,
                                       Diagnostics& diagnostics) const override;
};

}  // namespace mlenv::plan::day2
