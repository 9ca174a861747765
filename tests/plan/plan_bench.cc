// Benchmark: `plan` of a 1,000-env fleet against its previous plan. Generates the fleet's
// rendered output (what the target produces), plans and commits it in a fresh repository, edits
// one env, and times the first and the second plan stage by stage. Prints its numbers.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/plan/plan_session.h"
#include "compiler/plan/summary.h"
#include "tests/plan/support.h"

using namespace mlenv;
using namespace mlenv::plan;
using namespace mlenv::plan::testing;

namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::vector<FakeEnv> fleet(int count, const std::string& source_version, int edited) {
  std::vector<FakeEnv> envs;
  for (int i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "env-%04d", i);
    FakeEnv env = typical_env(name);
    env.cluster = "cluster-" + std::to_string(i % 10);
    env.inputs["cluster.mlenv"] = source_version;
    if (i == edited) {
      std::string& body = object(env, "StatefulSet", name).body;
      body.replace(body.find("replicas: 2"), 11, "replicas: 4");
    }
    envs.push_back(std::move(env));
  }
  return envs;
}

struct Timing {
  double open = 0, diff = 0, commit = 0, worktree = 0, total = 0;
  std::size_t files = 0;
  std::string line;
};

Timing plan_once(const target::Output& output, bool commit) {
  Timing t;
  auto start = std::chrono::steady_clock::now();
  Diagnostics diagnostics;
  auto step = std::chrono::steady_clock::now();
  auto session = PlanSession::open("", diagnostics);
  t.open = since(step);
  step = std::chrono::steady_clock::now();
  auto diff = session->diff(tree_from_output(output), "cluster.mlenv", diagnostics);
  t.diff = since(step);
  step = std::chrono::steady_clock::now();
  std::optional<ObjectId> id;
  if (commit) id = session->commit("plan\n\n" + summary_line(*diff) + "\n", diagnostics);
  t.commit = since(step);
  step = std::chrono::steady_clock::now();
  session->write_worktree(id.has_value(), diagnostics);
  t.worktree = since(step);
  t.total = since(start);
  t.files = output.files.size();
  t.line = summary_line(*diff);
  if (diagnostics.has_errors()) std::fprintf(stderr, "plan failed\n");
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int count = argc > 1 ? std::atoi(argv[1]) : 1000;
  int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  target::Output first = render(fleet(count, "v1", -1));
  // One env's change: with per-env input digests, no other env's plan.json changes.
  target::Output second = render(fleet(count, "v1", count / 2));
  std::vector<Timing> timings;
  Timing initial;
  for (int run = 0; run < runs; ++run) {
    TempDir dir;
    init_repo(dir.path());
    ChangeDir in(dir.path());
    initial = plan_once(first, true);
    timings.push_back(plan_once(second, true));
  }
  std::sort(timings.begin(), timings.end(),
            [](const Timing& a, const Timing& b) { return a.total < b.total; });
  const Timing& best = timings.front();
  const Timing& median = timings[timings.size() / 2];
  std::printf("fleet: %d envs, %zu files; %d runs, each in a fresh repository\n", count, best.files,
              runs);
  std::printf(
      "first plan (everything created): %.1f ms: open %.1f ms, diff %.1f ms, blobs+tree+commit+"
      "CAS %.1f ms, work tree + index %.1f ms\n",
      initial.total, initial.open, initial.diff, initial.commit, initial.worktree);
  std::printf("plan against the previous plan: best %.1f ms, median %.1f ms\n", best.total,
              median.total);
  std::printf(
      "  best run: open + read HEAD plan %.1f ms, diff %.1f ms, blobs+tree+commit+CAS %.1f ms,"
      " work tree + index %.1f ms\n",
      best.open, best.diff, best.commit, best.worktree);
  std::printf("  %s\n", best.line.c_str());
  std::printf("target 500 ms: %s\n", best.total < 500.0 ? "met" : "NOT met");
  return 0;
}
