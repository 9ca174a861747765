#pragma once
// The status file: what this node decided, for `mlenvc status` to read with `oc exec ... cat`
// (compiler/plan/day2/). It sits beside `shell_env`, in the pod's /run/mlenv, the directory
// mlenv-boot publishes to the users of `oc exec`.

#include <string>

#include "json.h"
#include "plan.h"

namespace boot {

/// `status.json` in the folder of `shell_env`; "" when shell_env is "" (nothing is published).
std::string status_file_path(const std::string& shell_env);

/// {"format_version": 1, "job", "node_rank", "nnodes", "world_size", "transport",
/// "transport_reason"}: known once the rendezvous has decided the plan.
Json status_document(const std::string& job, int node_rank, const JobPlan& plan);

/// Adds a service that exited, to `exited_services` ([{"name", "code"}]): `mlenvc status`
/// shows it, where the log alone would leave a dead tool unnoticed.
void add_exited_service(Json& document, const std::string& name, int code);

/// Writes the document atomically (a reader never sees half of it); a failure is a warning, as
/// for the other files of phase 5. Does nothing for an empty path.
void write_status_file(const std::string& path, const Json& document);

}  // namespace boot
