#pragma once
#include <cstdint>

namespace st {

// The number of threads CPU kernels use (OpenMP's current maximum).
int get_num_threads();

// The largest count set_num_threads accepts: four threads per processor the process may run on.
// Far larger counts made the OpenMP runtime fail to start its team and crash in the next kernel.
int max_num_threads();

// Sets the number of threads CPU kernels use. Throws ValueError, changing nothing, when n is below
// 1 or above max_num_threads().
void set_num_threads(int64_t n);

}  // namespace st
