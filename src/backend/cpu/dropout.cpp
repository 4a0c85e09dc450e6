// The CPU's dropout mask (Backend::dropout_mask): Philox blocks of four uniforms, one block per
// four elements, so a mask does not depend on the thread count and matches the devices' masks.
#include "backend/cpu/dropout.h"

#include "backend/cpu/loops.h"
#include "spiraltorch/generator.h"

namespace st::backend::cpu {

namespace {

// mask[i] = scale if u_i < keep_below else 0, u_i uniform from Philox block counter + i / 4.
template <typename T>
void fill_mask(T* m, int64_t n, uint64_t seed, uint64_t counter, double scale, float keep_below) {
  const T s = static_cast<T>(scale);
  const int64_t blocks = (n + 3) / 4;
#pragma omp parallel for num_threads(num_threads_for(n * 4)) schedule(static)
  for (int64_t bi = 0; bi < blocks; ++bi) {
    const auto block = Generator::philox(seed, counter + static_cast<uint64_t>(bi));
    for (int64_t l = 0; l < 4 && bi * 4 + l < n; ++l) {
      const float u = static_cast<float>(block[l] >> 8) * (1.0f / 16777216.0f);  // [0, 1)
      m[bi * 4 + l] = u < keep_below ? s : T(0);
    }
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
