// The fleet benchmark: renders N envs over M clusters (RDMA rails, three exposed services),
// writes the object stream and the output tree, and prints wall times and peak memory.
// Usage: targets_bench [envs=1000] [clusters=100]

#include <sys/resource.h>

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "compiler/plan/output_writer.h"
#include "tests/targets/fixtures.h"
#include "tests/targets/test_util.h"

namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  int envs = argc > 1 ? std::atoi(argv[1]) : 1000;
  int clusters = argc > 2 ? std::atoi(argv[2]) : 100;
  mlenv::ir::Program program = mlenv::testing::fleet(envs, clusters);

  auto t0 = std::chrono::steady_clock::now();
  mlenv::Diagnostics diagnostics;
  mlenv::target::Output out = mlenv::testing::render(program, diagnostics);
  double render_ms = since(t0);

  auto t1 = std::chrono::steady_clock::now();
  std::ostringstream stream;
  mlenv::plan::write_object_stream(out, stream);
  double stream_ms = since(t1);

  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mlenv-bench-" + std::to_string(::getpid()));
  auto t2 = std::chrono::steady_clock::now();
  std::string error = mlenv::plan::write_output_tree(out, dir.string());
  double tree_ms = since(t2);
  fs::remove_all(dir);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::size_t bytes = 0;
  for (const auto& f : out.files) bytes += f.content.size();
  std::printf("envs=%d clusters=%d objects=%zu files=%zu bytes=%zu stream_bytes=%zu\n", envs,
              clusters, out.stream.size(), out.files.size(), bytes, stream.str().size());
  std::printf(
      "render_ms=%.1f stream_ms=%.1f build_stream_total_ms=%.1f write_tree_ms=%.1f "
      "build_tree_total_ms=%.1f peak_rss_mb=%.1f\n",
      render_ms, stream_ms, render_ms + stream_ms, tree_ms, render_ms + tree_ms,
      static_cast<double>(usage.ru_maxrss) / 1024.0);
  if (!error.empty() || diagnostics.has_errors()) {
    std::fprintf(stderr, "bench failed: %s\n", error.c_str());
    return 1;
  }
  return 0;
}
