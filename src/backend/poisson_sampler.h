#pragma once
// The Poisson sampler of the CPU and CUDA poisson() kernels (host and device code), so both draw the
// same counts from the same Philox blocks. Rates below 10 use the multiplication method (multiply
// uniforms until the product falls to exp(-rate); rate + 1 uniforms on average); larger rates use
// Hörmann's transformed rejection with squeeze, PTRS ("The transformed rejection method for
// generating Poisson random variables", Insurance: Mathematics and Economics 12, 1993), about 1.15
// attempts per draw at any rate. Attempt r of element i reads Philox block
// (seed + r * kPoissonRoundKey, counter + i): two 53-bit uniforms per block.
#include <cmath>
#include <cstdint>

#include "backend/backend.h"

#ifdef __CUDACC__
#define ST_POISSON_HD __host__ __device__
#else
#define ST_POISSON_HD
#endif

namespace st::backend {

ST_POISSON_HD inline double poisson_unit(uint32_t hi, uint32_t lo) {
  // 27 + 26 bits: a uniform on the 2^-53 grid of [0, 1).
  return (static_cast<double>(hi >> 5) * 67108864.0 + static_cast<double>(lo >> 6)) * (1.0 / 9007199254740992.0);
}

ST_POISSON_HD inline double poisson_log_factorial(double k) {
#ifdef __CUDA_ARCH__
  return ::lgamma(k + 1.0);
#else
  int sign = 0;
  return ::lgamma_r(k + 1.0, &sign);  // lgamma() writes the global signgam: not for parallel loops
#endif
}

// One count for `rate` (finite, >= 0). `philox(key, counter, w)` writes the four 32-bit words of a block.
template <typename Philox>
ST_POISSON_HD double poisson_draw(double rate, uint64_t seed, uint64_t counter, const Philox& philox) {
  if (!(rate > 0)) return 0.0;
  uint64_t round = 0;
  double u = 0, v = 0;
  auto next_pair = [&] {
    uint32_t w[4];
    philox(seed + round * kPoissonRoundKey, counter, w);
    ++round;
    u = poisson_unit(w[0], w[1]);
    v = poisson_unit(w[2], w[3]);
  };
  if (rate < 10.0) {
    const double limit = ::exp(-rate);
    double product = 1.0, k = 0.0;
    for (;;) {
      next_pair();
      product *= u;
      if (product <= limit) return k;
      k += 1.0;
      product *= v;
      if (product <= limit) return k;
      k += 1.0;
    }
  }
  const double sq = ::sqrt(rate), log_rate = ::log(rate);
  const double b = 0.931 + 2.53 * sq, a = -0.059 + 0.02483 * b;
  const double log_inv_alpha = ::log(1.1239 + 1.1328 / (b - 3.4)), v_r = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    next_pair();
    const double us = 0.5 - ::fabs(u - 0.5);
    const double k = ::floor((2.0 * a / us + b) * (u - 0.5) + rate + 0.43);
    if (us >= 0.07 && v <= v_r) return k;  // the squeeze: inside the table mountain's core
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (::log(v) + log_inv_alpha - ::log(a / (us * us) + b) <= -rate + k * log_rate - poisson_log_factorial(k)) {
      return k;
    }
  }
}

}  // namespace st::backend
