#pragma once
// Runs independent pieces of work on the machine's cores. Each piece writes only its own
// result slot, and results are merged in index order afterwards, so output never depends on
// scheduling.

#include <cstddef>
#include <functional>

namespace mlenv {

/// Calls `body(i)` for every i in [0, n), on up to one thread per core in contiguous chunks
/// (on the calling thread alone when n is below `min_per_thread` twice). Rethrows the first
/// exception a call threw, after every thread has finished.
void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body,
                  std::size_t min_per_thread = 16);

}  // namespace mlenv
