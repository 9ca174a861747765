#pragma once
// The env's image build, for `status`.

#include <ostream>

#include "platforms/kube/day2/session.h"

namespace mlenv::plan::day2 {

/// `  build: <name> <phase>` of the newest build of the env's BuildConfig, when its plan builds
/// one (its `build` action); nothing otherwise.
void print_build(std::ostream& out, const Session& session);

}  // namespace mlenv::plan::day2
