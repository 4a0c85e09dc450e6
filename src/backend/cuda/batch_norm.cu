// CUDA batch norm over x seen as contiguous (n, c, l): per-channel sums with a (channel,
// split) grid and double atomics into a small scratch buffer, then elementwise apply /
// backward kernels that read the finished per-channel values.
#include <algorithm>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::cudak {

namespace {

constexpr int kBnThreads = 256;

__device__ inline double block_sum(double v, double* shared) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? shared[threadIdx.x] : 0.0;
  if (warp == 0) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  __syncthreads();
  return v;
}

// Channel blockIdx.x, split blockIdx.y of gridDim.y: adds sum(a) and sum(a * b') to acc[2c],
// acc[2c + 1], where b' = b (stats: b = x, so the second is sum x^2) or (b - mean) * rstd
// (backward: sum g and sum g xhat).
template <typename T, bool kXhat>
__global__ void channel_sums_kernel(const T* a, const T* b, const T* mean, const T* rstd, int64_t n, int64_t c,
                                    int64_t l, double* acc) {
  __shared__ double sh[2][32];
  const int64_t ch = blockIdx.x;
  const int64_t total = n * l;
  double s0 = 0, s1 = 0;
  const double m = kXhat ? static_cast<double>(mean[ch]) : 0.0, rs = kXhat ? static_cast<double>(rstd[ch]) : 1.0;
  for (int64_t e = blockIdx.y * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.y) * blockDim.x) {
    const int64_t row = e / l, j = e - row * l;
    const int64_t off = (row * c + ch) * l + j;
    const double av = static_cast<double>(a[off]);
    const double bv = kXhat ? (static_cast<double>(b[off]) - m) * rs : static_cast<double>(b[off]);
    s0 += av;
    s1 += av * bv;
  }
  s0 = block_sum(s0, sh[0]);
  s1 = block_sum(s1, sh[1]);
  if (threadIdx.x == 0) {
    atomicAdd(acc + 2 * ch, s0);
    atomicAdd(acc + 2 * ch + 1, s1);
  }
}

template <typename T>
__global__ void finish_stats_kernel(const double* acc, int64_t c, double count, double eps, T* mean, T* rstd, T* var) {
  const int64_t ch = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (ch >= c) return;
  const double m = acc[2 * ch] / count;
  const double v = fmax(acc[2 * ch + 1] / count - m * m, 0.0);
  mean[ch] = static_cast<T>(m);
  rstd[ch] = static_cast<T>(rsqrt(v + eps));
  var[ch] = static_cast<T>(v);
}

// Enough (channel, split) blocks to fill the device a few times over.
dim3 sums_grid(int64_t n, int64_t c, int64_t l) {
  const int64_t per_channel_blocks = (n * l + kBnThreads * 4 - 1) / (kBnThreads * 4);
  const int64_t want = std::max<int64_t>(1, (1024 + c - 1) / c);
  return dim3(static_cast<unsigned>(c), static_cast<unsigned>(std::clamp<int64_t>(want, 1, std::max<int64_t>(per_channel_blocks, 1))));
}

Tensor zeroed_acc(int64_t c, Device d) {
  Tensor acc = Tensor::empty({2 * c}, Dtype::Float64, d);
  ST_CUDA_CHECK(cudaMemsetAsync(acc.raw_data(), 0, static_cast<size_t>(2 * c) * sizeof(double), stream()));
  return acc;
}

template <typename T>
const T* opt(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

}  // namespace

void batch_norm_stats(const Tensor& x, int64_t n, int64_t c, int64_t l, double eps, Tensor& mean, Tensor& rstd,
                      Tensor& var) {
  if (n * l == 0 || c == 0) return;
  Tensor acc = zeroed_acc(c, x.device());
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    channel_sums_kernel<T, false><<<sums_grid(n, c, l), kBnThreads, 0, stream()>>>(
        x.data<T>(), x.data<T>(), nullptr, nullptr, n, c, l, acc.data<double>());
    ST_CUDA_LAUNCH_CHECK();
    finish_stats_kernel<T><<<blocks_for(c), kThreads, 0, stream()>>>(
        acc.data<double>(), c, static_cast<double>(n * l), eps, mean.data<T>(), rstd.data<T>(), var.data<T>());
    ST_CUDA_LAUNCH_CHECK();
  });
}

void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                      int64_t n, int64_t c, int64_t l, Tensor& y) {
  if (n * c * l == 0) return;
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    const T *xp = x.data<T>(), *mp = mean.data<T>(), *rp = rstd.data<T>(), *wp = opt<T>(w), *bp = opt<T>(b);
    T* yp = y.data<T>();
    for_n(n * c * l, [=] __device__(int64_t i) {
      const int64_t ch = (i / l) % c;
      const T scale = rp[ch] * (wp ? wp[ch] : T(1));
      yp[i] = (xp[i] - mp[ch]) * scale + (bp ? bp[ch] : T(0));
    });
  });
}

void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                         int64_t n, int64_t c, int64_t l, bool training, Tensor& dx, Tensor& dw, Tensor& db) {
  if (c == 0) return;
  Tensor acc = zeroed_acc(c, x.device());
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    if (n * l > 0) {
      channel_sums_kernel<T, true><<<sums_grid(n, c, l), kBnThreads, 0, stream()>>>(
          g.data<T>(), x.data<T>(), mean.data<T>(), rstd.data<T>(), n, c, l, acc.data<double>());
      ST_CUDA_LAUNCH_CHECK();
    }
    const double* sums = acc.data<double>();
    T* dwp = dw.defined() ? dw.data<T>() : nullptr;
    T* dbp = db.defined() ? db.data<T>() : nullptr;
    for_n(c, [=] __device__(int64_t ch) {
      if (dwp) dwp[ch] = static_cast<T>(sums[2 * ch + 1]);
      if (dbp) dbp[ch] = static_cast<T>(sums[2 * ch]);
    });
    if (dx.defined() && n * l > 0) {
      const T *gp = g.data<T>(), *xp = x.data<T>(), *mp = mean.data<T>(), *rp = rstd.data<T>(), *wp = opt<T>(w);
      T* dp = dx.data<T>();
      const double inv = 1.0 / static_cast<double>(n * l);
      for_n(n * c * l, [=] __device__(int64_t i) {
        const int64_t ch = (i / l) % c;
        const T rs = rp[ch];
        const T k = rs * (wp ? wp[ch] : T(1));
        if (training) {
          const T mg = static_cast<T>(sums[2 * ch] * inv), mgx = static_cast<T>(sums[2 * ch + 1] * inv);
          dp[i] = k * (gp[i] - mg - (xp[i] - mp[ch]) * rs * mgx);
        } else {
          dp[i] = k * gp[i];
        }
      });
    }
  });
}

}  // namespace st::cudak
