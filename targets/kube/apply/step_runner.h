#pragma once
// Runs (or, with --dry-run, prints) the steps of apply and destroy through oc/kubectl: each
// kind of step as StepKind describes it, every call bounded by --timeout.

#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "compiler/apply/apply_session.h"
#include "compiler/apply/build_context.h"
#include "compiler/apply/record_values.h"
#include "compiler/apply/runner.h"
#include "compiler/diag/diagnostic.h"
#include "targets/kube/apply/steps.h"

namespace mlenv::plan {

/// The host of an API server URL as a kubeconfig holds it, lower case:
/// `https://api.x.example.com:6443` -> `api.x.example.com`, `https://[fd00::1]:6443` ->
/// `fd00::1`; the text itself when it has no scheme.
std::string server_host(std::string_view server);

/// The arguments that make `client` (a path to oc or kubectl) print the URL of its current
/// server: oc's `whoami --show-server`, else kubectl's view of the kubeconfig cut down to the
/// current (or --context) context, which holds the same URL.
std::vector<std::string> current_server_args(const std::string& client);

/// Whether the host of `server` (what current_server_args printed) is `api`, the cluster of the
/// envs `units` names; otherwise reports E0719 naming both hosts, with the note `done` (what
/// was and was not done).
bool is_cluster_server(std::string_view server, const std::string& api, const std::string& units,
                       const std::string& done, Diagnostics& diagnostics);

/// Runs the steps of every env, in the order given, with the clients found for the request.
class StepRunner {
 public:
  StepRunner(const ApplyRequest& request, std::string kubectl, std::string oc, std::ostream& out,
             Diagnostics& diagnostics);

  /// Runs one step of the env `unit`; false when apply must stop (diagnostics reported).
  bool run(const Step& step, const std::string& unit);

  /// The digest reference `image` ran by in this apply (built or recorded), "" when none.
  std::string digest(const std::string& image) const;

  /// A run waited for ended Failed.
  bool run_failed() const { return run_failed_; }

  /// Refuses (E0719) when the host of the client's current server (`oc whoami --show-server`,
  /// else `kubectl config view --minify`) is not `api`, the cluster of the envs `units` names;
  /// a dry run prints the command. False when apply must stop (diagnostics reported).
  bool check_server(const std::string& api, const std::string& units);

 private:
  std::vector<std::string> argv(Client client, const std::vector<std::string>& args) const;
  void show(const std::vector<std::string>& command, const std::string& suffix = {});
  /// Runs a command under --timeout; reports E0706/E0707 and returns nullopt when it fails.
  std::optional<RunResult> call(const Step& step, const std::vector<std::string>& args,
                                const std::string& input, bool capture, bool quiet_failure = false,
                                int timeout = 0);
  bool run_plain(const Step& step);
  bool require_namespace(const Step& step);
  bool ensure_secret(const Step& step);
  bool check_grant(const Step& step);
  bool check_pod_security(const Step& step);
  bool build(const Step& step);
  /// Replaces the plan root `--from-dir=` names in `then` by a copy of only the build's context
  /// (`context`, kept alive until the build ends); false with E0706 when it cannot be made.
  bool upload_only_context(const Step& step, std::vector<std::string>& then,
                           std::optional<BuildContext>& context);
  bool push(const Step& step);
  bool wait_job(const Step& step);
  /// `queued in `<queue>`: <reason>: <message>` where the platform's queue has not admitted
  /// the run of `step`; "" for a run no queue holds.
  std::string queued_in(const Step& step);
  bool wait_rollout(const Step& step);
  /// The message of a FailedCreate event saying admission (Pod Security) refused the pods of
  /// the workload `kind` `name` in `namespace_` (a Job also matches the child Jobs named
  /// `<name>-...`), or "" when there is none.
  std::string admission_refusal(const Step& step, const std::string& kind, const std::string& name,
                                const std::string& namespace_);
  /// Reports the refusal `refused` of the pods of `step.subject` (E0713), with the label the
  /// namespace needs.
  void report_refusal(const Step& step, const std::string& namespace_, const std::string& refused);
  /// Reports E0707 (timed out) or E0706 (failed) for `args`, which ended as `result`.
  /// A wait's failure (WaitRollout, WaitJob) says that the env stays recorded, applied.
  void report_failure(const Step& step, const std::vector<std::string>& args,
                      const RunResult& result);

  const ApplyRequest& request_;
  const std::string kubectl_;
  const std::string oc_;
  const std::string image_builder_;  ///< podman, buildah or docker; "" when none is on PATH
  std::ostream& out_;
  Diagnostics& diagnostics_;
  const int timeout_;
  std::string unit_;
  std::map<std::string, std::string> digests_;  // image -> digest reference
  std::set<std::string> images_done_;           // images built, pushed or read in this apply
  bool run_failed_ = false;
};

}  // namespace mlenv::plan
