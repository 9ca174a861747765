// Whole-process benchmark of `mlenvc` (prints numbers; not a test): `check` and `build` of a
// given example, `check` of generated programs of N clusters, images and envs, `build` of a
// generated fleet of 1,000 envs over 100 clusters, as a stream and as a tree, and `plan` of
// that fleet in a fresh repository (first plan, re-plan after one env's change) next to
// `git add -A && git commit` of the same tree; peak memory of each child from wait4.
//   mlenvc_bench MLENVC EXAMPLE [RUNS]
//   mlenvc_bench MLENVC --plan [RUNS]     (only the plan figures)

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/bench/fleet.h"

namespace {

using mlenv::bench::fleet;

struct Run {
  double ms;
  long max_rss_kb;
  int status;
};

// Runs `mlenvc ARGS...` in `cwd` ("" for this directory) with stdout and stderr on /dev/null.
Run run(const std::string& mlenvc, const std::vector<std::string>& args,
        const std::string& cwd = "") {
  std::vector<char*> argv{const_cast<char*>(mlenvc.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    execv(mlenvc.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return {ms, usage.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128};
}

// Output trees: each timed run writes a new one, and all are removed at the end, because
// creating files right after deleting as many is several times slower on ext4 without a
// journal (the kernel steps over recently freed inodes), which would time the benchmark's
// own clean-up rather than mlenvc.
const std::string kTrees = "/tmp/mlenv_bench_trees";
int tree_count = 0;
std::string next_tree() {
  return kTrees + "/" + std::to_string(tree_count++);
}

// Runs `mlenvc ARGS...` `runs` times and prints the median, the minimum and the peak RSS;
// an argument "DIR" is replaced by a new output directory each run.
bool measure(const std::string& what, const std::string& mlenvc,
             const std::vector<std::string>& args, int runs, double* median = nullptr) {
  std::vector<double> times;
  long rss = 0;
  for (int i = 0; i < runs; ++i) {
    std::vector<std::string> actual = args;
    for (std::string& a : actual) {
      if (a == "DIR") a = next_tree();
    }
    Run r = run(mlenvc, actual);
    if (r.status != 0) {
      std::fprintf(stderr, "%s: mlenvc exited with %d\n", what.c_str(), r.status);
      return false;
    }
    times.push_back(r.ms);
    rss = std::max(rss, r.max_rss_kb);
  }
  std::sort(times.begin(), times.end());
  std::printf("%-52s median %8.2f ms, min %8.2f ms, peak RSS %6.1f MB (%d runs)\n", what.c_str(),
              times[times.size() / 2], times.front(), rss / 1024.0, runs);
  if (median) *median = times[times.size() / 2];
  return true;
}

// Runs a shell command; its wall time in ms, or a negative number when it failed.
double shell_ms(const std::string& command) {
  auto start = std::chrono::steady_clock::now();
  if (std::system(command.c_str()) != 0) return -1;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// A fresh repository in `dir` holding `fleet.mlenv`, committed.
bool fleet_repo(const std::string& dir, const std::string& source) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/fleet.mlenv") << source;
  return shell_ms("cd " + dir + " && git init -q -b main . && git config user.email b@example.com" +
                  // No automatic gc: `git commit` of 25,000 loose objects would start one in the
                  // background, taking the CPU from the runs that follow.
                  " && git config user.name Bench && git config gc.auto 0" +
                  " && git add fleet.mlenv && git commit -qm fleet") >= 0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// `mlenvc plan` of the 1,000-env fleet in a fresh repository, its re-plan after one env's
// `nodes` changed, and `git add -A && git commit` of the same plan tree in another fresh
// repository (the yardstick: plan must cost at most twice that).
bool measure_plan(const std::string& mlenvc, int runs) {
  std::string source = fleet(1000, 100);
  std::string edited = source;
  std::size_t env = edited.find("env e500 {");
  edited.replace(edited.find("nodes = 2", env), 9, "nodes = 1");
  std::vector<double> first, again, git;
  for (int i = 0; i < runs; ++i) {
    std::string dir = next_tree();
    if (!fleet_repo(dir, source)) return false;
    Run plan = run(mlenvc, {"plan", "fleet.mlenv"}, dir);
    std::ofstream(dir + "/fleet.mlenv") << edited;
    if (plan.status != 0 || shell_ms("cd " + dir + " && git commit -qam e500") < 0) {
      std::fprintf(stderr, "plan in %s: mlenvc exited with %d\n", dir.c_str(), plan.status);
      return false;
    }
    Run replan = run(mlenvc, {"plan", "fleet.mlenv"}, dir);
    std::string copy = next_tree();
    if (replan.status != 0 || !fleet_repo(copy, source) ||
        shell_ms("cp -r " + dir + "/plans " + copy + "/plans") < 0) {
      std::fprintf(stderr, "re-plan in %s: mlenvc exited with %d\n", dir.c_str(), replan.status);
      return false;
    }
    double commit = shell_ms("cd " + copy + " && git add -A && git commit -qm plans");
    if (commit < 0) return false;
    first.push_back(plan.ms);
    again.push_back(replan.ms);
    git.push_back(commit);
  }
  std::printf("%-52s median %8.2f ms (%d runs)\n", "plan fleet, first (fresh repository)",
              median(first), runs);
  std::printf("%-52s median %8.2f ms (%d runs)\n", "plan fleet, again after one env's change",
              median(again), runs);
  std::printf("%-52s median %8.2f ms (%d runs)\n", "git add -A && git commit of that plan tree",
              median(git), runs);
  std::printf("%-52s %8.2f\n", "first plan / git add+commit", median(first) / median(git));
  return true;
}

// `build -o -` of the fleet of `envs` envs beside `pkl eval` of `module`, which renders the same
// objects (tests/bench/pkl/), in one run on one machine; `check` of that fleet first.
bool measure_pkl(const std::string& mlenvc, const std::string& pkl, const std::string& module,
                 int envs, int runs) {
  std::string path = "/tmp/mlenv_bench_pkl_fleet.mlenv";
  std::ofstream(path) << fleet(envs, std::max(1, envs / 10));
  std::string count = std::to_string(envs);
  double ours = 0, theirs = 0;
  bool ok = measure("mlenvc check fleet (" + count + " envs)", mlenvc, {"check", path}, runs) &&
            measure("mlenvc build fleet (" + count + " envs) -o -", mlenvc,
                    {"build", path, "-o", "-"}, runs, &ours) &&
            measure("pkl eval of the same objects (" + count + " envs)", pkl, {"eval", module},
                    runs, &theirs);
  if (ok) std::printf("%-52s %8.2fx\n", "pkl time / mlenvc time", theirs / ours);
  std::remove(path.c_str());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: mlenvc_bench MLENVC EXAMPLE [RUNS]\n"
                 "       mlenvc_bench --fleet ENVS CLUSTERS     (the fleet program, on stdout)\n"
                 "       mlenvc_bench MLENVC --pkl PKL MODULE ENVS [RUNS]\n");
    return 2;
  }
  if (std::string(argv[1]) == "--fleet" && argc == 4) {
    std::fputs(fleet(std::atoi(argv[2]), std::atoi(argv[3])).c_str(), stdout);
    return 0;
  }
  if (std::string(argv[2]) == "--pkl" && argc >= 6) {
    return measure_pkl(argv[1], argv[3], argv[4], std::atoi(argv[5]),
                       argc > 6 ? std::atoi(argv[6]) : 5)
               ? 0
               : 1;
  }
  std::string mlenvc = argv[1], example = argv[2];
  int runs = argc > 3 ? std::atoi(argv[3]) : 30;
  if (example == "--plan") {  // only the plan figures: mlenvc_bench MLENVC --plan [RUNS]
    bool ok = measure_plan(mlenvc, argc > 3 ? runs : 3);
    if (std::getenv("MLENV_BENCH_KEEP") != nullptr) return ok ? 0 : 1;
    std::error_code ignored;
    std::filesystem::remove_all(kTrees, ignored);
    return ok ? 0 : 1;
  }
  bool ok = measure("check " + example, mlenvc, {"check", example}, runs) &&
            measure("build " + example + " -o DIR", mlenvc, {"build", example, "-o", "DIR"}, runs);
  for (int n : {250, 500, 1000}) {
    if (!ok) break;
    std::string path = "/tmp/mlenv_bench_" + std::to_string(n) + ".mlenv";
    std::ofstream(path) << fleet(n, n);
    ok =
        measure("check " + std::to_string(n) + " clusters+images+envs", mlenvc, {"check", path}, 5);
    std::remove(path.c_str());
  }
  std::string path = "/tmp/mlenv_bench_fleet.mlenv";
  std::ofstream(path) << fleet(1000, 100);
  ok = ok &&
       measure("build fleet (1,000 envs, 100 clusters) -o -", mlenvc, {"build", path, "-o", "-"},
               5) &&
       measure("build fleet (1,000 envs, 100 clusters) -o DIR", mlenvc,
               {"build", path, "-o", "DIR"}, 5) &&
       measure_plan(mlenvc, 3);
  std::error_code ignored;
  std::filesystem::remove_all(kTrees, ignored);
  std::remove(path.c_str());
  return ok ? 0 : 1;
}
