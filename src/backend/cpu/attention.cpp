// CPU kernels of the fused attention softmax (src/nn/attention.cpp): per row of the raw
// scores, the scaled, causally masked softmax with its log-sum-exp, and the elementwise part
// of its backward. Half types are read and written as such and computed in float32.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/vmath.h"

namespace st::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {

template <typename F>
void dispatch_attn(Dtype dt, F f) {
  switch (dt) {
    case Dtype::Float64: return f(double{});
    case Dtype::Float16: return f(Half{});
    case Dtype::BFloat16: return f(BFloat16{});
    default: return f(float{});
  }
}

// Columns of row i that are not masked.
inline int64_t visible(int64_t i, int64_t S, bool causal) { return causal ? std::min(S, i + 1) : S; }

}  // namespace

void attention_softmax(const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal, Tensor& p,
                       Tensor& lse) {
  const int64_t rows = batch * L;
  if (rows == 0) return;
  dispatch_attn(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    A* lp = lse.data<A>();
    const T* in = s.data<T>();
    T* out = p.data<T>();
#pragma omp parallel for num_threads(num_threads_for(rows * S * 4)) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = visible(r % L, S, causal);
      const T* x = in + r * S;
      T* y = out + r * S;
      A m = -std::numeric_limits<A>::infinity();
      for (int64_t j = 0; j < n; ++j) m = std::max(m, static_cast<A>(scale) * static_cast<A>(x[j]));
      if (n == 0 || !std::isfinite(m)) {
        for (int64_t j = 0; j < S; ++j) y[j] = T(0.0f);
        lp[r] = n == 0 ? -std::numeric_limits<A>::infinity() : m;
        continue;
      }
      const A sc = static_cast<A>(scale);
      A sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < n; ++j) sum += vexp(sc * static_cast<A>(x[j]) - m);
      const A inv = A(1) / sum;
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) y[j] = T(vexp(sc * static_cast<A>(x[j]) - m) * inv);
      for (int64_t j = n; j < S; ++j) y[j] = T(0.0f);
      lp[r] = m + std::log(sum);
    }
  });
}

void attention_softmax_backward(Tensor& s, Tensor& dp, const Tensor& lse, const Tensor& delta, int64_t batch,
                                int64_t L, int64_t S, double scale, bool causal) {
  const int64_t rows = batch * L;
  if (rows == 0) return;
  dispatch_attn(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const A* lp = lse.data<A>();
    const A* dl = delta.data<A>();
    T* sp = s.data<T>();
    T* gp = dp.data<T>();
#pragma omp parallel for num_threads(num_threads_for(rows * S * 4)) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = visible(r % L, S, causal);
      const A l = lp[r], d = dl[r];
      T* x = sp + r * S;
      T* g = gp + r * S;
      const A sc = static_cast<A>(scale);
      const int64_t live = std::isfinite(l) ? n : 0;  // a fully masked row has p = 0
#pragma omp simd
      for (int64_t j = 0; j < live; ++j) {
        const A pj = vexp(sc * static_cast<A>(x[j]) - l);
        x[j] = T(pj);
        g[j] = T(sc * pj * (static_cast<A>(g[j]) - d));
      }
      for (int64_t j = live; j < S; ++j) {
        x[j] = T(0.0f);
        g[j] = T(sc * A(0) * (static_cast<A>(g[j]) - d));  // 0, or NaN where dp is not finite
      }
    }
  });
}

}  // namespace st::cpu::CPU_CAPABILITY
