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

__device__ inline uint32_t philox_lane(const uint4& b, int i) {
  return i == 0 ? b.x : i == 1 ? b.y : i == 2 ? b.z : b.w;
}

// The factor dropout_mask() writes at flat index e: `scale` where the uniform of Philox block
// (counter + e / 4), lane e % 4, is below keep_below, else 0 (DropoutDraw in backend.h).
__device__ inline float dropout_factor(uint64_t seed, uint64_t counter, int64_t e, float keep_below, float scale) {
  const uint4 block = philox(seed, counter + static_cast<uint64_t>(e / 4));
  const float u = (philox_lane(block, static_cast<int>(e % 4)) >> 8) * (1.0f / 16777216.0f);
  return u < keep_below ? scale : 0.0f;
}

}  // namespace st::backend::cuda
