#pragma once
// The whole pipeline of mlenv-boot, phase after phase: identity, discovery, probe, rendezvous,
// environment, self-test, launch. main() only parses flags and reports the error that ends it.

#include "options.h"

namespace boot {

/// Runs mlenv-boot and returns its exit code; the dry-run plan goes to stdout, everything else
/// to stderr. Throws BootError for configuration errors, timeouts and peer loss.
int run_boot(const Options& options);

}  // namespace boot
