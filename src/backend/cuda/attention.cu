// CUDA kernels of the fused attention softmax (src/nn/attention.cpp): one block per row of
// the raw scores for the scaled, causally masked softmax and its log-sum-exp, and one per
// row for the backward's p / ds. Half types are read and written as such and
// computed in float32.
#include <cfloat>
#include <climits>
#include <string>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

namespace {

constexpr int kRowThreads = 128;

template <typename A>
__device__ inline A block_reduce(A v, A* shared, bool is_max) {
  for (int o = 16; o > 0; o >>= 1) {
    const A other = __shfl_down_sync(0xffffffffu, v, o);
    v = is_max ? (other > v ? other : v) : v + other;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    A r = shared[0];
    for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
      r = is_max ? (shared[w] > r ? shared[w] : r) : r + shared[w];
    shared[0] = r;
  }
  __syncthreads();
  const A r = shared[0];
  __syncthreads();
  return r;
}

template <typename T, typename A>
__global__ void attn_softmax_kernel(const T* s, T* p, A* lse, int64_t L, int64_t S, A scale, bool causal) {
  __shared__ A sh[32];
  const int64_t r = blockIdx.x;
  const int64_t n = causal ? min(S, r % L + 1) : S;
  const T* x = s + r * S;
  T* y = p + r * S;
  A m = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = fmax(m, scale * convert<A>(x[j]));
  m = block_reduce<A>(m, sh, true);
  A sum = 0;
  if (n > 0 && isfinite(m)) {
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += exp(scale * convert<A>(x[j]) - m);
  }
  sum = block_reduce<A>(sum, sh, false);
  const bool ok = n > 0 && isfinite(m);
  const A inv = ok ? A(1) / sum : A(0);
  for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
    const A v = ok && j < n ? exp(scale * convert<A>(x[j]) - m) * inv : A(0);
    y[j] = convert<T>(v);
  }
  if (threadIdx.x == 0) lse[r] = n == 0 ? A(-INFINITY) : (ok ? m + log(sum) : m);
}

// One block per score row: the row's lse and delta are read once, column math is 32-bit.
template <typename T, typename A>
__global__ void attn_softmax_backward_kernel(T* s, T* dp, const A* lse, const A* delta, int L, int S, A scale,
                                             bool causal) {
  const int64_t r = blockIdx.x;
  const int visible = causal ? min(S, static_cast<int>(r % L) + 1) : S;
  const A l = lse[r], dl = delta[r];
  const bool any = isfinite(l);
  T* const x = s + r * S;
  T* const y = dp + r * S;
  for (int j = threadIdx.x; j < S; j += blockDim.x) {
    const A pj = any && j < visible ? exp(scale * convert<A>(x[j]) - l) : A(0);
    x[j] = convert<T>(pj);
    y[j] = convert<T>(scale * pj * (convert<A>(y[j]) - dl));
  }
}

}  // namespace

void attention_softmax(const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal, Tensor& p,
                       Tensor& lse) {
  const int64_t rows = batch * L;
  if (rows == 0) return;
  dispatch_float_accum(s.dtype(), [&](auto t, auto a) {
    using T = decltype(t);
    using A = decltype(a);
    attn_softmax_kernel<T, A><<<static_cast<unsigned>(rows), kRowThreads, 0, stream()>>>(
        static_cast<const T*>(s.raw_data()), static_cast<T*>(p.raw_data()), lse.data<A>(), L, S, static_cast<A>(scale),
        causal);
    ST_CUDA_LAUNCH_CHECK();
  });
}

void attention_softmax_backward(Tensor& s, Tensor& dp, const Tensor& lse, const Tensor& delta, int64_t batch, int64_t L,
                                int64_t S, double scale, bool causal) {
  const int64_t rows = batch * L;
  if (rows == 0 || S == 0) return;
  if (S > INT_MAX || L > INT_MAX || rows > INT_MAX) {
    throw ValueError("attention_softmax_backward: " + std::to_string(rows) + " rows of " + std::to_string(S) +
                     " scores exceed the kernel's 32-bit grid");
  }
  dispatch_float_accum(s.dtype(), [&](auto t, auto a) {
    using T = decltype(t);
    using A = decltype(a);
    attn_softmax_backward_kernel<T, A><<<static_cast<unsigned>(rows), kRowThreads, 0, stream()>>>(
        static_cast<T*>(s.raw_data()), static_cast<T*>(dp.raw_data()), lse.data<A>(), delta.data<A>(),
        static_cast<int>(L), static_cast<int>(S), static_cast<A>(scale), causal);
    ST_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace st::backend::cuda
