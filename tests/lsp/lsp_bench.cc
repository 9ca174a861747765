// How long `mlenvc lsp` takes from an edit to the diagnostics it publishes (written and
// flushed), on the benchmark fleet (tests/bench/fleet.h). Usage: lsp_bench [ENVS [EDITS]] (default
// 1,000 envs over 100 clusters, 20 edits). Prints the figures; the goal (README.md "Speed") is 150
// ms at 1,000 envs, which this prints beside them. It is a benchmark, not a timed test.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/lsp/protocol.h"
#include "compiler/lsp/server.h"
#include "tests/bench/fleet.h"

namespace {

// A string buffer that notes when it was last flushed: the server flushes each message it
// writes, so this is when the editor could read the diagnostics.
struct FlushClock : std::stringbuf {
  std::chrono::steady_clock::time_point flushed;
  int sync() override {
    flushed = std::chrono::steady_clock::now();
    return std::stringbuf::sync();
  }
};

}  // namespace

int main(int argc, char** argv) {
  int envs = argc > 1 ? std::atoi(argv[1]) : 1000;
  int edits = argc > 2 ? std::atoi(argv[2]) : 20;
  std::string text = mlenv::bench::fleet(envs, std::max(1, envs / 10));
  std::string uri = "file:///tmp/mlenv-lsp-bench/fleet.mlenv";
  FlushClock clock;
  std::ostream out(&clock);
  mlenv::lsp::Server server("/tmp/mlenv-lsp-bench/cache", out);
  using boot::Json;
  auto open = Json::object().set("textDocument", Json::object()
                                                     .set("uri", uri)
                                                     .set("languageId", "mlenv")
                                                     .set("version", 1)
                                                     .set("text", text));
  server.handle(Json::object()
                    .set("jsonrpc", "2.0")
                    .set("method", "textDocument/didOpen")
                    .set("params", open));
  std::vector<double> times;
  for (int i = 0; i < edits; ++i) {
    // One env's node count changes, as a user's edit would; every other edit is an error.
    std::string edited = text;
    std::size_t at = edited.find("nodes = 2", edited.size() / 2);
    edited.replace(at, 9, i % 2 ? "nodes = 3" : "nodes = \"x\"");
    Json changes = Json::array();
    changes.push(Json::object().set("text", edited));
    Json change = Json::object()
                      .set("jsonrpc", "2.0")
                      .set("method", "textDocument/didChange")
                      .set("params", Json::object()
                                         .set("textDocument", Json::object().set("uri", uri))
                                         .set("contentChanges", changes));
    std::string body = change.dump();  // as the editor sends it: parsed on the clock
    std::size_t before = clock.str().size();
    auto start = std::chrono::steady_clock::now();
    server.receive(body);
    times.push_back(std::chrono::duration<double, std::milli>(clock.flushed - start).count());
    if (clock.str().find("publishDiagnostics", before) == std::string::npos) {
      std::fprintf(stderr, "lsp_bench: no diagnostics published after an edit\n");
      return 1;
    }
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "lsp: edit to published diagnostics, %d envs: median %.1f ms, min %.1f ms, max %.1f ms"
      " (%d edits; goal at 1,000 envs: 150 ms)\n",
      envs, times[times.size() / 2], times.front(), times.back(), edits);
  return 0;
}
