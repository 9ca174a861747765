#pragma once
// The URLs of an env, for `urls` and `status`.

#include "platforms/kube/day2/session.h"

namespace mlenv::plan::day2 {

/// The env's Routes as URLs (`get routes -l <selector> -o json`); nullopt with E0706 reported.
std::optional<std::vector<ExposedUrl>> exposed_urls(const Session& session,
                                                    Diagnostics& diagnostics);

}  // namespace mlenv::plan::day2
