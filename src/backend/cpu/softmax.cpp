#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/vmath.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {
template <typename T>
void softmax_typed(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out) {
  {
    const T* in = x.data<T>();
    T* o = out.data<T>();
    const int threads = num_threads_for(rows * cols * 4);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = in + r * cols;
      T* orow = o + r * cols;
      T m = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : m)
      for (int64_t j = 0; j < cols; ++j) m = xr[j] > m ? xr[j] : m;
      if (!std::isfinite(m)) m = m != m ? m : T(0);  // rows of -inf stay NaN-free until normalised
      double s = 0;
      if (log) {
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < cols; ++j) s += vexp(xr[j] - m);
        const T lse = m + static_cast<T>(std::log(s));
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) orow[j] = xr[j] - lse;
      } else {
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < cols; ++j) {
          const T e = vexp(xr[j] - m);
          orow[j] = e;
          s += e;
        }
        const T inv = static_cast<T>(1.0 / s);
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) orow[j] *= inv;
      }
    }
  }
}
template <typename T>
void softmax_backward_typed(const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx) {
  const T* gp = g.data<T>();
  const T* yp = y.data<T>();
  T* o = dx.data<T>();
  const int threads = num_threads_for(rows * cols * 3);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const T* gr = gp + r * cols;
    const T* yr = yp + r * cols;
    T* orow = o + r * cols;
    double s = 0;
    if (log) {
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < cols; ++j) s += gr[j];
      const T st = static_cast<T>(s);
      for (int64_t j = 0; j < cols; ++j) orow[j] = gr[j] - vexp(yr[j]) * st;
    } else {
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < cols; ++j) s += gr[j] * yr[j];
      const T st = static_cast<T>(s);
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) orow[j] = yr[j] * (gr[j] - st);
    }
  }
}
}  // namespace

void softmax_backward(const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx) {
  ST_DISPATCH_FLOAT(y.dtype(), [&] { softmax_backward_typed<scalar_t>(g, y, rows, cols, log, dx); });
}

void softmax(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out) {
  ST_DISPATCH_FLOAT(x.dtype(), [&] { softmax_typed<scalar_t>(x, rows, cols, log, out); });
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
