#pragma once
// The Philox generator in device code (random fills in elementwise.cu, Poisson draws in scan.cu).
#include <cstdint>

#include "core/philox.h"

namespace st::backend::cuda {

// Philox4x32-10, the same function as Generator::philox on the host (core/philox.h).
__device__ inline uint4 philox(uint64_t seed, uint64_t counter) {
  uint32_t w[4];
  st::detail::philox4x32(seed, counter, w);
  return make_uint4(w[0], w[1], w[2], w[3]);
}

}  // namespace st::backend::cuda
