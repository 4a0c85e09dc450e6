// The CPU's dropout mask (Backend::dropout_mask): Philox blocks of four uniforms, one block per
// four elements, so a mask does not depend on the thread count and matches the devices' masks.
#include "backend/cpu/dropout.h"

#include <algorithm>

#include "backend/cpu/loops.h"
#include "spiraltorch/generator.h"

namespace st::backend::cpu {

template <typename T>
void dropout_factors(T* f, int64_t e0, int64_t n, uint64_t seed, uint64_t counter, T scale, float keep_below) {
  for (int64_t e = e0, end = e0 + n; e < end;) {
    const auto block = Generator::philox(seed, counter + static_cast<uint64_t>(e / 4));
    for (int64_t lane = e % 4; lane < 4 && e < end; ++lane, ++e) {
      const float u = static_cast<float>(block[lane] >> 8) * (1.0f / 16777216.0f);  // [0, 1)
      *f++ = u < keep_below ? scale : T(0);
    }
  }
}
template void dropout_factors<float>(float*, int64_t, int64_t, uint64_t, uint64_t, float, float);
template void dropout_factors<double>(double*, int64_t, int64_t, uint64_t, uint64_t, double, float);

namespace {

template <typename T>
void fill_mask(T* m, int64_t n, uint64_t seed, uint64_t counter, double scale, float keep_below) {
  constexpr int64_t kChunk = 1024;  // elements per task, a multiple of a Philox block's four
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(num_threads_for(n * 4)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t e0 = c * kChunk;
    dropout_factors(m + e0, e0, std::min(kChunk, n - e0), seed, counter, static_cast<T>(scale), keep_below);
  }
}

}  // namespace

void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep) {
  const float keep_below = static_cast<float>(keep);  // the op passes a float32 threshold
  if (out.dtype() == Dtype::Float64) {
    fill_mask(out.data<double>(), out.numel(), seed, counter, scale, keep_below);
  } else if (out.dtype() == Dtype::Float32) {
    fill_mask(out.data<float>(), out.numel(), seed, counter, scale, keep_below);
  } else {
    throw DtypeError(std::string("dropout_mask: expected a float32 or float64 mask, got ") + dtype_name(out.dtype()));
  }
}

}  // namespace st::backend::cpu
