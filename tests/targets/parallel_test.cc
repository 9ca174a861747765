#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "compiler/base/parallel.h"

using mlenv::parallel_for;

TEST_CASE("parallel_for calls every index once, into its own slot", "[parallel]") {
  for (std::size_t n : {0, 1, 15, 33, 1000}) {
    std::vector<int> calls(n, 0);
    parallel_for(
        n, [&](std::size_t i) { ++calls[i]; }, 4);
    CHECK(calls == std::vector<int>(n, 1));
  }
}

TEST_CASE("parallel_for rethrows what a call threw, after all threads finish", "[parallel]") {
  std::atomic<int> done{0};
  CHECK_THROWS_AS(parallel_for(
                      400,
                      [&](std::size_t i) {
                        if (i == 7) throw std::runtime_error("seven");
                        ++done;
                      },
                      4),
                  std::runtime_error);
  // The failing chunk stopped at 7; the others (one per further core) ran to their end.
  CHECK(done.load() >= 7);
  CHECK(done.load() < 400);
}
