#pragma once
#include <cstdint>
#include <functional>

namespace st {

// The number of threads CPU kernels use (OpenMP's current maximum).
int get_num_threads();

// The largest count set_num_threads accepts: four threads per processor the process may run on.
// Far larger counts made the OpenMP runtime fail to start its team and crash in the next kernel.
int max_num_threads();

// Sets the number of threads CPU kernels use. Throws ValueError, changing nothing, when n is below
// 1 or above max_num_threads().
void set_num_threads(int64_t n);

// Host-side parallel loops (batch assembly, planners, embedding trainers): runs body(begin, end)
// over [0, n) in ranges of at most `grain` items, handed out to the CPU kernels' threads as they
// free up (at most `threads`, 0 for get_num_threads()). Runs on the calling thread alone when
// n <= grain or one thread is allowed. The ranges must be independent; an exception thrown by
// body stops the remaining ranges and the first one is rethrown here. The only place outside
// src/backend that needs threads uses this, so OpenMP stays inside the CPU backend.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& body,
                  int threads = 0);

}  // namespace st
