#pragma once
// `debug = true` (boot.json `debugpy_port`): the job's rank-0 worker listens for a debugger.
// Workers are the user's Python programs, started directly or by a launcher (torchrun,
// deepspeed, accelerate), so mlenv-boot cannot add arguments to them; instead it puts a
// sitecustomize.py first on PYTHONPATH, which Python's site module imports at start-up in
// every process: the one whose RANK is 0 calls debugpy.listen(("127.0.0.1", port)) (reached
// with port-forward, never routed), then the image's own sitecustomize, which it shadows, runs.

#include <string>

#include "process_env.h"

namespace boot {

/// Writes the hook into a new private directory under /tmp; its path, or "" (with a warning
/// logged) where it cannot be written.
std::string write_debugpy_hook();

/// Puts the hook's directory first on `env`'s PYTHONPATH and tells it the port.
void add_debugpy_hook(EnvMap& env, const std::string& dir, int port);

}  // namespace boot
