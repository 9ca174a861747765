#include "compiler/base/parallel.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace mlenv {

void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body,
                  std::size_t min_per_thread) {
  std::size_t cores = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  std::size_t threads = std::min(cores, n / std::max<std::size_t>(1, min_per_thread));
  if (threads < 2) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::vector<std::exception_ptr> errors(threads);
  auto run = [&](std::size_t t) {
    try {
      for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) body(i);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  // Every chunk runs on a thread of its own while the caller waits: glibc gives each thread
  // its own malloc arena, and the caller's is fragmented by all it built before (a fleet's
  // checked program, when rendering), where rendering took 9% more CPU at 10,000 envs.
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < threads; ++t) workers.emplace_back(run, t);
  for (std::thread& w : workers) w.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace mlenv
