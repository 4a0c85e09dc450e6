// CPU batch norm over x seen as (n, c, l): per-channel statistics, the affine apply and the
// analytic backward. Statistics accumulate in double; channels run in parallel.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/optional_data.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {

int channel_threads(int64_t c, int64_t work) {
  return static_cast<int>(std::min<int64_t>(std::max<int64_t>(c, 1), num_threads_for(work)));
}

template <typename T>
void stats(const T* x, int64_t n, int64_t c, int64_t l, double eps, T* mean, T* rstd, T* var_out) {
#pragma omp parallel for num_threads(channel_threads(c, n* c* l * 2)) schedule(static)
  for (int64_t ch = 0; ch < c; ++ch) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T* p = x + (i * c + ch) * l;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < l; ++j) s += p[j];
    }
    const double m = s / static_cast<double>(n * l);
    double v = 0;  // two passes: no cancellation when |mean| >> std
    for (int64_t i = 0; i < n; ++i) {
      const T* p = x + (i * c + ch) * l;
#pragma omp simd reduction(+ : v)
      for (int64_t j = 0; j < l; ++j) {
        const double d = p[j] - m;
        v += d * d;
      }
    }
    v /= static_cast<double>(n * l);
    mean[ch] = static_cast<T>(m);
    rstd[ch] = static_cast<T>(1.0 / std::sqrt(v + eps));
    var_out[ch] = static_cast<T>(v);
  }
}

template <typename T>
void apply(const T* x, const T* mean, const T* rstd, const T* w, const T* b, T* y, int64_t n, int64_t c, int64_t l) {
#pragma omp parallel for num_threads(num_threads_for(n* c* l * 2)) schedule(static)
  for (int64_t r = 0; r < n * c; ++r) {
    const int64_t ch = r % c;
    const T scale = rstd[ch] * (w ? w[ch] : T(1));
    const T shift = (b ? b[ch] : T(0)) - mean[ch] * scale;
    const T* p = x + r * l;
    T* q = y + r * l;
#pragma omp simd
    for (int64_t j = 0; j < l; ++j) q[j] = p[j] * scale + shift;
  }
}

template <typename T>
void backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* dx, T* dw, T* db, int64_t n,
              int64_t c, int64_t l, bool training) {
  std::vector<double> sg(static_cast<size_t>(c)), sgx(static_cast<size_t>(c));
#pragma omp parallel for num_threads(channel_threads(c, n* c* l * 2)) schedule(static)
  for (int64_t ch = 0; ch < c; ++ch) {
    double a = 0, bsum = 0;
    const T m = mean[ch], rs = rstd[ch];
    for (int64_t i = 0; i < n; ++i) {
      const T* gp = g + (i * c + ch) * l;
      const T* xp = x + (i * c + ch) * l;
#pragma omp simd reduction(+ : a, bsum)
      for (int64_t j = 0; j < l; ++j) {
        a += gp[j];
        bsum += gp[j] * ((xp[j] - m) * rs);
      }
    }
    sg[ch] = a;
    sgx[ch] = bsum;
    if (dw) dw[ch] = static_cast<T>(bsum);
    if (db) db[ch] = static_cast<T>(a);
  }
  if (!dx) return;
  const double inv_m = 1.0 / static_cast<double>(n * l);
#pragma omp parallel for num_threads(num_threads_for(n* c* l * 3)) schedule(static)
  for (int64_t r = 0; r < n * c; ++r) {
    const int64_t ch = r % c;
    const T m = mean[ch], rs = rstd[ch];
    const T k = rs * (w ? w[ch] : T(1));
    const T* gp = g + r * l;
    const T* xp = x + r * l;
    T* dp = dx + r * l;
    if (training) {
      const T mg = static_cast<T>(sg[ch] * inv_m), mgx = static_cast<T>(sgx[ch] * inv_m);
#pragma omp simd
      for (int64_t j = 0; j < l; ++j) dp[j] = k * (gp[j] - mg - (xp[j] - m) * rs * mgx);
    } else {
#pragma omp simd
      for (int64_t j = 0; j < l; ++j) dp[j] = k * gp[j];
    }
  }
}

}  // namespace

void batch_norm_stats(const Tensor& x, int64_t n, int64_t c, int64_t l, double eps, Tensor& mean, Tensor& rstd,
                      Tensor& var) {
  if (n * l == 0) return;
  ST_DISPATCH_FLOAT(x.dtype(), [&] {
    stats<scalar_t>(x.data<scalar_t>(), n, c, l, eps, mean.data<scalar_t>(), rstd.data<scalar_t>(),
                    var.data<scalar_t>());
  });
}

void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                      int64_t n, int64_t c, int64_t l, Tensor& y) {
  if (n * c * l == 0) return;
  ST_DISPATCH_FLOAT(x.dtype(), [&] {
    apply<scalar_t>(x.data<scalar_t>(), mean.data<scalar_t>(), rstd.data<scalar_t>(), opt<scalar_t>(w),
                    opt<scalar_t>(b), y.data<scalar_t>(), n, c, l);
  });
}

void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                         int64_t n, int64_t c, int64_t l, bool training, Tensor& dx, Tensor& dw, Tensor& db) {
  ST_DISPATCH_FLOAT(x.dtype(), [&] {
    if (n * l == 0) {  // no values: zero gradients
      for (Tensor* t : {&dw, &db}) {
        if (t->defined()) std::fill_n(t->data<scalar_t>(), c, scalar_t(0));
      }
      return;
    }
    backward<scalar_t>(g.data<scalar_t>(), x.data<scalar_t>(), mean.data<scalar_t>(), rstd.data<scalar_t>(),
                       opt<scalar_t>(w), opt_mut<scalar_t>(dx), opt_mut<scalar_t>(dw), opt_mut<scalar_t>(db), n, c, l,
                       training);
  });
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
