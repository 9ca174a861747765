#pragma once
// The URLs of an env's Routes, for `urls` and `status`.

#include "targets/kube/day2/session.h"

namespace mlenv::plan::day2 {

/// The URLs of a `get routes -o json` list, sorted by name: https when the Route has `tls`.
std::optional<std::vector<ExposedUrl>> parse_routes(const std::string& json, std::string& error);

/// The env's Routes as URLs (`get routes -l <selector> -o json`); nullopt with E0706 reported.
std::optional<std::vector<ExposedUrl>> exposed_urls(const Session& session,
                                                    Diagnostics& diagnostics);

}  // namespace mlenv::plan::day2
