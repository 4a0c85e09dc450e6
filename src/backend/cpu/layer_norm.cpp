// CPU layer norm over the last `cols` of a contiguous (rows, cols) float tensor (the fused
// forward and its analytic backward; src/nn/functional.cpp records the autograd node). Row
// statistics accumulate in double; rows run in parallel.
#include <omp.h>

#include <cmath>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/optional_data.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {

template <typename T>
void ln_forward(const T* x, const T* w, const T* b, T* y, T* mean_out, T* rstd_out, int64_t rows, int64_t cols,
                double eps) {
  const int threads = num_threads_for(rows * cols * 4);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < cols; ++j) s += xr[j];
    const double mu = s / static_cast<double>(cols);
    double v = 0;
#pragma omp simd reduction(+ : v)
    for (int64_t j = 0; j < cols; ++j) {
      const double d = xr[j] - mu;
      v += d * d;
    }
    const double rs = 1.0 / std::sqrt(v / static_cast<double>(cols) + eps);
    const T m = static_cast<T>(mu), rst = static_cast<T>(rs);
    if (w && b) {
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * rst * w[j] + b[j];
    } else if (w) {
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * rst * w[j];
    } else if (b) {
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * rst + b[j];
    } else {
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * rst;
    }
    mean_out[r] = m;
    rstd_out[r] = rst;
  }
}

// dx = rstd * (g*w - mean(g*w) - xhat * mean(g*w*xhat)); dw = sum_rows g*xhat; db = sum_rows g.
template <typename T>
void ln_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* dx, T* dw, T* db, int64_t rows,
                 int64_t cols) {
  const int threads = num_threads_for(rows * cols * 6);
  const bool want_params = dw || db;
  std::vector<T> partial;  // per-thread sums in T: a thread covers rows / threads rows
  if (want_params) partial.assign(static_cast<size_t>(threads) * 2 * cols, T(0));
  const double inv_n = 1.0 / static_cast<double>(cols);
#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num();
    T* pw = want_params ? partial.data() + static_cast<size_t>(tid) * 2 * cols : nullptr;
    T* pb = want_params ? pw + cols : nullptr;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* gr = g + r * cols;
      const T* xr = x + r * cols;
      const T m = mean[r], rs = rstd[r];
      if (dx) {
        double s1 = 0, s2 = 0;
        if (w) {
#pragma omp simd reduction(+ : s1, s2)
          for (int64_t j = 0; j < cols; ++j) {
            const T gw = gr[j] * w[j];
            s1 += gw;
            s2 += gw * ((xr[j] - m) * rs);
          }
        } else {
#pragma omp simd reduction(+ : s1, s2)
          for (int64_t j = 0; j < cols; ++j) {
            s1 += gr[j];
            s2 += gr[j] * ((xr[j] - m) * rs);
          }
        }
        const T a = static_cast<T>(s1 * inv_n), c = static_cast<T>(s2 * inv_n);
        T* dr = dx + r * cols;
        if (w) {
#pragma omp simd
          for (int64_t j = 0; j < cols; ++j) dr[j] = rs * (gr[j] * w[j] - a - (xr[j] - m) * rs * c);
        } else {
#pragma omp simd
          for (int64_t j = 0; j < cols; ++j) dr[j] = rs * (gr[j] - a - (xr[j] - m) * rs * c);
        }
      }
      if (want_params) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) {
          pw[j] += gr[j] * ((xr[j] - m) * rs);
          pb[j] += gr[j];
        }
      }
    }
  }
  if (want_params) {
#pragma omp parallel for num_threads(num_threads_for(cols* threads)) schedule(static)
    for (int64_t j = 0; j < cols; ++j) {
      double sw = 0, sb = 0;
      for (int t = 0; t < threads; ++t) {
        sw += partial[static_cast<size_t>(t) * 2 * cols + j];
        sb += partial[static_cast<size_t>(t) * 2 * cols + cols + j];
      }
      if (dw) dw[j] = static_cast<T>(sw);
      if (db) db[j] = static_cast<T>(sb);
    }
  }
}

}  // namespace

void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols, double eps, Tensor& y,
                Tensor& mean, Tensor& rstd) {
  ST_DISPATCH_FLOAT(x.dtype(), [&] {
    ln_forward<scalar_t>(x.data<scalar_t>(), opt<scalar_t>(w), opt<scalar_t>(b), y.data<scalar_t>(),
                         mean.data<scalar_t>(), rstd.data<scalar_t>(), rows, cols, eps);
  });
}

void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                         int64_t rows, int64_t cols, Tensor& dx, Tensor& dw, Tensor& db) {
  ST_DISPATCH_FLOAT(x.dtype(), [&] {
    ln_backward<scalar_t>(g.data<scalar_t>(), x.data<scalar_t>(), mean.data<scalar_t>(), rstd.data<scalar_t>(),
                          opt<scalar_t>(w), opt_mut<scalar_t>(dx), opt_mut<scalar_t>(dw), opt_mut<scalar_t>(db), rows,
                          cols);
  });
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
