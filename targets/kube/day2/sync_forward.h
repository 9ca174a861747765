#pragma once
// The parts of `sync` and `port-forward` that `dev-session` runs together: the same checks,
// the same errors, the same client calls.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/day2/commands.h"
#include "compiler/diag/diagnostic.h"
#include "targets/kube/day2/session.h"

namespace mlenv::plan::day2 {

/// `request.dir` into the env's pods through `session`, then (`request.watch`) again on each
/// change while `request.keep_watching()` says so. Returns the exit status.
int sync_with(const Session& session, const SyncRequest& request, std::ostream& out,
              Diagnostics& diagnostics);

/// The port of `service` in the env's `ports`; nullopt with E0753 (listing the ports) reported.
std::optional<int> forwarded_port(const Session& session, const std::string& service,
                                  Diagnostics& diagnostics);

/// The client's `port-forward -n <ns> pod/<rank 0's pod> LOCAL:PORT` (LOCAL: `local_port`, or
/// `port` when 0); nullopt with E0752 reported when rank 0's pod does not run.
std::optional<std::vector<std::string>> forward_argv(const Session& session, int port,
                                                     int local_port, Diagnostics& diagnostics);

}  // namespace mlenv::plan::day2
