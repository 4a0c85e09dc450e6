// CUDA batch norm over x seen as contiguous (n, c, l): per-channel sums with a (channel,
// split) grid and double atomics into a small scratch buffer, then elementwise apply /
// backward kernels that read the finished per-channel values. Index arithmetic is 32-bit
// with multiply-shift division when n * c * l < 2^31 (64-bit division per element made these
// bandwidth-bound kernels compute-bound), 64-bit otherwise.
#include <algorithm>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

namespace {

constexpr int kBnThreads = 256;

// x / d for x < 2^31 by a multiply-high and a shift (d >= 1): m = 2^32 (2^s - d) / d + 1
// with 2^s >= d, then x / d = (umulhi(x, m) + x) >> s.
struct Div32 {
  uint32_t d, m, s;
  explicit Div32(int64_t divisor) : d(static_cast<uint32_t>(divisor)), s(0) {
    while (s < 31 && (uint64_t{1} << s) < d) ++s;
    m = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << s) - d)) / d + 1);
  }
  __device__ uint32_t operator()(uint32_t x) const { return (__umulhi(x, m) + x) >> s; }
};

// Index maps for an element e of (n, c, l): its channel, and (for the per-channel sums) the
// offset of the e-th element of a channel's n * l values.
struct Index32 {
  Div32 by_l, by_c;
  uint32_t l, c;
  Index32(int64_t c_, int64_t l_) : by_l(l_), by_c(c_), l(static_cast<uint32_t>(l_)), c(static_cast<uint32_t>(c_)) {}
  __device__ uint32_t channel(uint32_t i) const {
    const uint32_t row = by_l(i);
    return row - by_c(row) * c;
  }
  __device__ uint32_t offset(uint32_t e, uint32_t ch) const {
    const uint32_t row = by_l(e);
    return (row * c + ch) * l + (e - row * l);
  }
};
struct Index64 {
  int64_t c, l;
  Index64(int64_t c_, int64_t l_) : c(c_), l(l_) {}
  __device__ int64_t channel(int64_t i) const { return (i / l) % c; }
  __device__ int64_t offset(int64_t e, int64_t ch) const {
    const int64_t row = e / l;
    return (row * c + ch) * l + (e - row * l);
  }
};

bool fits32(int64_t n, int64_t c, int64_t l) { return n * c * l < (int64_t{1} << 31); }

// Grid-stride over the n * c * l elements: f(i, channel of i) (both as int64_t).
template <typename I, typename Idx, typename F>
__global__ void per_element_kernel(I total, Idx idx, F f) {
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<I>(gridDim.x) * blockDim.x) {
    f(static_cast<int64_t>(i), static_cast<int64_t>(idx.channel(i)));
  }
}

template <typename F>
void for_each_element(int64_t n, int64_t c, int64_t l, F f) {
  const int64_t total = n * c * l;
  if (total <= 0) return;
  if (fits32(n, c, l)) {
    per_element_kernel<uint32_t>
        <<<blocks_for(total, kThreads, 4), kThreads, 0, stream()>>>(static_cast<uint32_t>(total), Index32(c, l), f);
  } else {
    per_element_kernel<int64_t><<<blocks_for(total, kThreads, 4), kThreads, 0, stream()>>>(total, Index64(c, l), f);
  }
  ST_CUDA_LAUNCH_CHECK();
}

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
// Enough (channel, split) blocks to fill the device a few times over.
dim3 sums_grid(int64_t n, int64_t c, int64_t l) {
  const int64_t per_channel_blocks = (n * l + kBnThreads * 4 - 1) / (kBnThreads * 4);
  const int64_t want = std::max<int64_t>(1, (1024 + c - 1) / c);
  return dim3(static_cast<unsigned>(c),
              static_cast<unsigned>(std::clamp<int64_t>(want, 1, std::max<int64_t>(per_channel_blocks, 1))));
}

template <typename T, bool kXhat, typename I, typename Idx>
__global__ void channel_sums_kernel(const T* a, const T* b, const T* mean, const T* rstd, I per_channel, Idx idx,
                                    double* acc) {
  __shared__ double sh[2][32];
  const I ch = blockIdx.x;
  double s0 = 0, s1 = 0;
  const double m = kXhat ? static_cast<double>(mean[ch]) : 0.0, rs = kXhat ? static_cast<double>(rstd[ch]) : 1.0;
  for (I e = blockIdx.y * static_cast<I>(blockDim.x) + threadIdx.x; e < per_channel;
       e += static_cast<I>(gridDim.y) * blockDim.x) {
    const I off = idx.offset(e, ch);
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

// acc[2c], acc[2c + 1] += sum a, sum a * b' per channel (see channel_sums_kernel).
template <typename T, bool kXhat>
void channel_sums(const T* a, const T* b, const T* mean, const T* rstd, int64_t n, int64_t c, int64_t l, double* acc) {
  if (fits32(n, c, l)) {
    channel_sums_kernel<T, kXhat, uint32_t><<<sums_grid(n, c, l), kBnThreads, 0, stream()>>>(
        a, b, mean, rstd, static_cast<uint32_t>(n * l), Index32(c, l), acc);
  } else {
    channel_sums_kernel<T, kXhat, int64_t>
        <<<sums_grid(n, c, l), kBnThreads, 0, stream()>>>(a, b, mean, rstd, n * l, Index64(c, l), acc);
  }
  ST_CUDA_LAUNCH_CHECK();
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
    channel_sums<T, false>(x.data<T>(), x.data<T>(), nullptr, nullptr, n, c, l, acc.data<double>());
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
    for_each_element(n, c, l, [=] __device__(int64_t i, int64_t ch) {
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
      channel_sums<T, true>(g.data<T>(), x.data<T>(), mean.data<T>(), rstd.data<T>(), n, c, l, acc.data<double>());
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
      for_each_element(n, c, l, [=] __device__(int64_t i, int64_t ch) {
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

}  // namespace st::backend::cuda
