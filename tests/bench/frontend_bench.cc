// Front-end benchmark (prints numbers; not a test): the whole `mlenvc check` process on
// barcelona, and on generated programs of N clusters, images and envs, with peak memory.
//   frontend_bench MLENVC EXAMPLE [RUNS]

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Run {
  double ms;
  long max_rss_kb;
  int status;
};

Run run(const std::string& mlenvc, const std::string& file) {
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stderr);
    execl(mlenvc.c_str(), mlenvc.c_str(), "check", file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  return {ms, usage.ru_maxrss, WEXITSTATUS(status)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// N clusters (each with four RDMA rails), N images, N envs, importing the stdlib.
std::string fleet(int n) {
  std::string out = "import \"std/profiles/h100\"\nimport \"std/images/pytorch\"\n\n";
  for (int i = 0; i < n; ++i) {
    std::string c = "c" + std::to_string(i), e = "e" + std::to_string(i);
    out += "cluster " + c + " extends h100.node4 {\n  api = \"api." + c +
           ".example.com\"\n  namespace = \"ns-" + c + "\"\n  nodes = [\"" + c + "-a\", \"" + c +
           "-b\"]\n  storage {\n    mode = per_pod\n    class = \"ceph-rbd\"\n  }\n"
           "  network {\n    rdma {\n      rails = [\n";
    for (int r = 0; r < 4; ++r) {
      out += "        { device = \"mlx5_" + std::to_string(r + 2) + "\", interface = \"net" +
             std::to_string(r + 1) + "\" },\n";
    }
    out += "      ]\n      gid_index = 3\n    }\n  }\n}\n\n";
    out += "image " + e + " extends pytorch.pytorch29 {\n  pip += [\"pkg" + std::to_string(i) +
           "\"]\n}\n\n";
    out += "env " + e + " {\n  cluster = " + c + "\n  image = " + e +
           "\n  nodes = 2\n  network = rdma\n  services = [vscode, jupyter, tensorboard]\n}\n\n";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: frontend_bench MLENVC EXAMPLE [RUNS]\n");
    return 2;
  }
  std::string mlenvc = argv[1], example = argv[2];
  int runs = argc > 3 ? std::atoi(argv[3]) : 30;
  std::vector<double> times;
  long rss = 0;
  for (int i = 0; i < runs; ++i) {
    Run r = run(mlenvc, example);
    if (r.status != 0) {
      std::fprintf(stderr, "mlenvc check %s failed\n", example.c_str());
      return 1;
    }
    times.push_back(r.ms);
    rss = std::max(rss, r.max_rss_kb);
  }
  std::printf("check %s: median %.2f ms, min %.2f ms over %d runs, peak RSS %.1f MB\n",
              example.c_str(), median(times), *std::min_element(times.begin(), times.end()), runs,
              rss / 1024.0);
  for (int n : {250, 500, 1000}) {
    std::string path = "/tmp/mlenv_frontend_bench_" + std::to_string(n) + ".mlenv";
    std::ofstream(path) << fleet(n);
    std::vector<double> fleet_times;
    long fleet_rss = 0;
    for (int i = 0; i < 5; ++i) {
      Run r = run(mlenvc, path);
      if (r.status != 0) {
        std::fprintf(stderr, "mlenvc check %s failed\n", path.c_str());
        return 1;
      }
      fleet_times.push_back(r.ms);
      fleet_rss = std::max(fleet_rss, r.max_rss_kb);
    }
    std::printf("check fleet of %4d clusters+images+envs: median %7.1f ms, peak RSS %6.1f MB\n",
                n, median(fleet_times), fleet_rss / 1024.0);
    std::remove(path.c_str());
  }
  return 0;
}
