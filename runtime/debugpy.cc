#include "debugpy.h"

#include <stdlib.h>

#include "log.h"
#include "util.h"

namespace boot {
namespace {

constexpr const char* kPortVariable = "MLENV_DEBUGPY_PORT";

// The rank-0 worker takes the port (popping it, so that its own children, DataLoader workers
// and debugpy's adapter among them, do not try again); a failure is printed, never fatal.
constexpr const char* kHook = R"(# Written by mlenv-boot for `debug = true` (runtime/debugpy.h).
import os
import sys

_port = os.environ.pop("MLENV_DEBUGPY_PORT", "") if os.environ.get("RANK") == "0" else ""
if _port:
    try:
        import debugpy

        debugpy.listen(("127.0.0.1", int(_port)))
        print("mlenv: debugpy listens on 127.0.0.1:" + _port + " in rank 0", file=sys.stderr,
              flush=True)
    except Exception as error:
        print("mlenv: debugpy did not start: " + repr(error), file=sys.stderr, flush=True)

# The image's own sitecustomize, which this one shadows on PYTHONPATH, if there is one.
_self = sys.modules.get("sitecustomize")
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules["sitecustomize"]
try:
    import sitecustomize  # noqa: F401
except ImportError:
    sys.modules["sitecustomize"] = _self
)";

}  // namespace

std::string write_debugpy_hook() {
  char dir[] = "/tmp/mlenv-debugpy-XXXXXX";
  if (::mkdtemp(dir) == nullptr ||
      !write_file_atomic(std::string(dir) + "/sitecustomize.py", kHook)) {
    log_warning("cannot write the debugpy hook under /tmp: debug = true starts no debugpy");
    return "";
  }
  return dir;
}

void add_debugpy_hook(EnvMap& env, const std::string& dir, int port) {
  auto existing = env.find("PYTHONPATH");
  const bool has_path = existing != env.end() && !existing->second.empty();
  env["PYTHONPATH"] = dir + (has_path ? ":" + existing->second : "");
  env[kPortVariable] = std::to_string(port);
}

}  // namespace boot
