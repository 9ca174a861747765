#pragma once
// The env's image build, for `status`.

#include <ostream>

#include "targets/kube/day2/session.h"

namespace mlenv::plan::day2 {

/// The newest build of a `get builds -o json` list (highest `openshift.io/build.number`).
struct BuildState {
  std::string name;
  std::string phase;
};
std::optional<BuildState> parse_latest_build(const std::string& json, std::string& error);

/// `  build: <name> <phase>` of the newest build of the env's BuildConfig, when its plan builds
/// one (its `build` action); nothing otherwise.
void print_build(std::ostream& out, const Session& session);

}  // namespace mlenv::plan::day2
