// The CPU's fused softmax cross-entropy rows (Backend::cross_entropy_rows and its backward):
// one pass per row over contiguous (rows, C) float32/float64 logits, the float32 rows through the
// capability-dispatched SIMD row kernels (loss_rows.cpp), sums of exponentials in float64.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/loss.h"

namespace st::backend::cpu {

namespace {

// max and log-sum-exp of one row; an all -inf (or +inf) row keeps its infinity in lse.
template <typename T>
double row_lse(const T* xr, int64_t C) {
  double m = -std::numeric_limits<double>::infinity();
  double s = 0;
  if constexpr (std::is_same_v<T, float>) {
    m = row_max(xr, C);
    if (std::isinf(m)) m = 0;
    s = row_sum_exp(xr, C, static_cast<float>(m));
  } else {
    for (int64_t c = 0; c < C; ++c) m = std::max(m, static_cast<double>(xr[c]));
    if (std::isinf(m)) m = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(static_cast<double>(xr[c]) - m);
  }
  return m + std::log(s);
}

}  // namespace

bool cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss,
                        Tensor& lse) {
  if (x.dtype() != Dtype::Float32 && x.dtype() != Dtype::Float64) return false;  // half types: the composite
  const int64_t rows = x.size(0), C = x.size(1);
  const int64_t* tp = t.data<int64_t>();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* lp = loss.data<T>();
    T* sp = lse.data<T>();
#pragma omp parallel for num_threads(num_threads_for(rows* C)) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = xp + r * C;
      const double l = row_lse(xr, C);
      const int64_t y = tp[r];
      sp[r] = static_cast<T>(l);
      lp[r] = y == ignore_index   ? T(0)
              : (y < 0 || y >= C) ? std::numeric_limits<T>::quiet_NaN()
                                  : static_cast<T>(scale * (l - static_cast<double>(xr[y])));
    }
  };
  if (x.dtype() == Dtype::Float64)
    run(double{});
  else
    run(float{});
  return true;
}

bool cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                 int64_t ignore_index, double scale, Tensor& dx) {
  if (x.dtype() != Dtype::Float32 && x.dtype() != Dtype::Float64) return false;
  const int64_t rows = x.size(0), C = x.size(1), g_stride = g.numel() == 1 ? 0 : 1;
  const int64_t* tp = t.data<int64_t>();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    const T* lp = lse.data<T>();
    const T* gp = g.data<T>();
    T* dp = dx.data<T>();
#pragma omp parallel for num_threads(num_threads_for(rows* C)) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = xp + r * C;
      T* dr = dp + r * C;
      const int64_t y = tp[r];
      const double gr = y == ignore_index ? 0.0 : scale * static_cast<double>(gp[r * g_stride]);
      const double l = lp[r];
      if constexpr (std::is_same_v<T, float>) {
        // softmax - onehot: the SIMD row gives gr * exp(x - lse), then the target's own term.
        row_ce_grad(xr, nullptr, C, static_cast<float>(l), static_cast<float>(gr), 1.0f, 0.0f, dr);
      } else {
        for (int64_t c = 0; c < C; ++c) dr[c] = static_cast<T>(gr * std::exp(static_cast<double>(xr[c]) - l));
      }
      if (y >= 0 && y < C) dr[y] = static_cast<T>(gr * (std::exp(static_cast<double>(xr[y]) - l) - 1.0));
    }
  };
  if (x.dtype() == Dtype::Float64)
    run(double{});
  else
    run(float{});
  return true;
}

}  // namespace st::backend::cpu
