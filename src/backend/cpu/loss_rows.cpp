// SIMD row kernels of the float32 softmax cross-entropy (src/nn/loss.cpp) over one contiguous
// row of logits: max, sum of exponentials (accumulated in double) and the logits' gradient; and
// the conversions that let half rows go through them.
#include <cmath>
#include <cstdint>

#include "backend/cpu/elem_io.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/vmath.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

// max_i x[i]; NaNs are skipped here (they reach the sum below and make the row NaN there).
float row_max(const float* x, int64_t n) {
  float m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// sum_i exp(x[i] - shift), each exponential in float32, the sum in float64.
double row_sum_exp(const float* x, int64_t n, float shift) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(vexp(x[i] - shift));
  return s;
}

// gx[i] = g * (a * exp(x[i] - lse) - b * w[i]) (w = 1 when null): the gradient of a softmax
// cross-entropy row before the target's own term is added.
void row_ce_grad(const float* x, const float* w, int64_t n, float lse, float g, float a, float b, float* gx) {
  if (w) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) gx[i] = g * (a * vexp(x[i] - lse) - b * w[i]);
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) gx[i] = g * (a * vexp(x[i] - lse) - b);
  }
}

void row_to_floats(const uint16_t* x, int64_t n, bool bf16, float* v) {
  if (bf16) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) v[i] = load_elem<BFloat16>(x[i]);
  } else {
    halves_to_floats(x, n, v);  // F16C where this capability has it
  }
}

void row_from_floats(const float* v, int64_t n, bool bf16, uint16_t* o) {
  if (bf16) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = store_elem<BFloat16>(v[i]);
  } else {
    floats_to_halves(v, n, o);
  }
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
