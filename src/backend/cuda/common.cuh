#pragma once
// Shared pieces of the CUDA kernels: error checks, the current stream, dtype dispatch
// to device types, strided N-d offset calculation and grid-stride launch helpers.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <string>

#include "backend/backend.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/error.h"

namespace st::cudak {

[[noreturn]] void throw_cuda(cudaError_t err, const char* what, const char* file, int line);

#define ST_CUDA_CHECK(expr)                                                       \
  do {                                                                            \
    cudaError_t st_err_ = (expr);                                                 \
    if (st_err_ != cudaSuccess) ::st::cudak::throw_cuda(st_err_, #expr, __FILE__, __LINE__); \
  } while (0)
#define ST_CUDA_LAUNCH_CHECK() ST_CUDA_CHECK(cudaGetLastError())

// The stream kernels of the current device are launched on.
cudaStream_t stream();
cudaStream_t t_stream_of(int device);
void set_stream_of(int device, cudaStream_t s);
// Makes `index` the current device of this thread (cheap when it already is).
void use_device(int index);

// Device types per dtype: 16-bit floats use CUDA's own types (same bits).
template <typename T> struct dev_type { using type = T; };
template <> struct dev_type<Half> { using type = __half; };
template <> struct dev_type<BFloat16> { using type = __nv_bfloat16; };

#define STK_DISPATCH_ALL(DT, ...)                                                          \
  [&] {                                                                                    \
    switch (DT) {                                                                          \
      case ::st::Dtype::Bool: { using scalar_t = bool; return __VA_ARGS__(); }             \
      case ::st::Dtype::UInt8: { using scalar_t = uint8_t; return __VA_ARGS__(); }         \
      case ::st::Dtype::Int32: { using scalar_t = int32_t; return __VA_ARGS__(); }         \
      case ::st::Dtype::Int64: { using scalar_t = int64_t; return __VA_ARGS__(); }         \
      case ::st::Dtype::Float16: { using scalar_t = __half; return __VA_ARGS__(); }        \
      case ::st::Dtype::BFloat16: { using scalar_t = __nv_bfloat16; return __VA_ARGS__(); } \
      case ::st::Dtype::Float32: { using scalar_t = float; return __VA_ARGS__(); }         \
      case ::st::Dtype::Float64: default: { using scalar_t = double; return __VA_ARGS__(); } \
    }                                                                                      \
  }()

template <typename T> struct is_half_t { static constexpr bool value = false; };
template <> struct is_half_t<__half> { static constexpr bool value = true; };
template <> struct is_half_t<__nv_bfloat16> { static constexpr bool value = true; };
template <typename T> constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_t<T>::value;

// Value conversions through float (16-bit types) or double.
template <typename T>
__host__ __device__ inline double to_d(T v) {
  if constexpr (std::is_same_v<T, __half>) return static_cast<double>(__half2float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return static_cast<double>(__bfloat162float(v));
  else return static_cast<double>(v);
}
template <typename T>
__host__ __device__ inline float to_f(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
  else return static_cast<float>(v);
}
template <typename D, typename S>
__host__ __device__ inline D convert(S v) {
  if constexpr (std::is_same_v<S, D>) {
    return v;
  } else if constexpr (std::is_same_v<D, bool>) {
    return to_d(v) != 0.0;
  } else if constexpr (std::is_same_v<D, __half>) {
    return __float2half_rn(static_cast<float>(to_d(v)));
  } else if constexpr (std::is_same_v<D, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(to_d(v)));
  } else if constexpr (is_half_t<S>::value) {
    return static_cast<D>(to_f(v));
  } else {
    return static_cast<D>(v);
  }
}

// ---- strided geometry ----
constexpr int kMaxDims = 12;
template <int N>
struct Geometry {
  int nd = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims];        // outermost first, after coalescing
  int64_t strides[N][kMaxDims];   // element strides per operand
  bool contiguous = false;        // nd == 1 and every operand's stride is 0 or 1
};

// Builds the loop over `shape` for operands with element strides strides[i]; dims that
// are contiguous for every operand are merged.
template <int N>
Geometry<N> make_geometry(const Shape& shape, const std::array<const Shape*, N>& strides) {
  Geometry<N> g;
  g.numel = shape_numel(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (g.nd > 0) {
      bool mergeable = true;
      for (int i = 0; i < N; ++i) mergeable &= g.strides[i][g.nd - 1] == (*strides[i])[d] * shape[d];
      if (mergeable) {
        g.sizes[g.nd - 1] *= shape[d];
        for (int i = 0; i < N; ++i) g.strides[i][g.nd - 1] = (*strides[i])[d];
        continue;
      }
    }
    if (g.nd == kMaxDims) throw ShapeError("cuda: tensors with more than 12 non-mergeable dimensions are not supported");
    g.sizes[g.nd] = shape[d];
    for (int i = 0; i < N; ++i) g.strides[i][g.nd] = (*strides[i])[d];
    ++g.nd;
  }
  if (g.nd == 0) {
    g.nd = 1;
    g.sizes[0] = 1;
    for (int i = 0; i < N; ++i) g.strides[i][0] = 0;
  }
  g.contiguous = g.nd == 1;
  for (int i = 0; i < N; ++i) g.contiguous &= g.strides[i][0] == 0 || g.strides[i][0] == 1;
  return g;
}

template <int N>
__device__ inline void offsets(const Geometry<N>& g, int64_t i, int64_t (&off)[N]) {
  if (g.contiguous) {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = i * g.strides[k][0];
    return;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = g.nd - 1; d >= 0; --d) {
    const int64_t s = g.sizes[d];
    const int64_t idx = i % s;
    i /= s;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += idx * g.strides[k][d];
  }
}

// Runs the block with T = double for float64 tensors and T = float otherwise. A macro
// rather than a generic lambda: nvcc refuses extended __device__ lambdas defined
// inside a generic lambda, and these blocks launch such lambdas.
#define ST_CUDA_FLOAT_CASES(DTYPE, ...) \
  do {                                 \
    if ((DTYPE) == Dtype::Float64) {   \
      using T = double;                \
      __VA_ARGS__                      \
    } else {                           \
      using T = float;                 \
      __VA_ARGS__                      \
    }                                  \
  } while (0)

constexpr int kThreads = 256;
inline int blocks_for(int64_t n, int threads = kThreads, int64_t per_thread = 1) {
  const int64_t b = (n + threads * per_thread - 1) / (threads * per_thread);
  return static_cast<int>(b < 1 ? 1 : (b > 65535 * 32 ? 65535 * 32 : b));
}

// Grid-stride loop over i in [0, n) calling f(i).
template <typename F>
__global__ void for_n_kernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    f(i);
  }
}
template <typename F>
void for_n(int64_t n, F f) {
  if (n <= 0) return;
  for_n_kernel<<<blocks_for(n), kThreads, 0, stream()>>>(n, f);
  ST_CUDA_LAUNCH_CHECK();
}

// Elementwise launch over a geometry: f(off) with off[k] the element offset of operand k.
template <int N, typename F>
__global__ void geometry_kernel(Geometry<N> g, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < g.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[N];
    offsets<N>(g, i, off);
    f(off);
  }
}
// The contiguous case: 4 independent elements per thread per iteration.
template <int N, typename F>
__global__ void contiguous_kernel(int64_t n, std::array<int64_t, N> s, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      int64_t off[N];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] = (i + u * stride) * s[k];
      f(off);
    }
  }
  for (; i < n; i += stride) {
    int64_t off[N];
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = i * s[k];
    f(off);
  }
}
template <int N, typename F>
void launch_geometry(const Geometry<N>& g, F f) {
  if (g.numel <= 0) return;
  if (g.contiguous) {
    std::array<int64_t, N> s;
    for (int k = 0; k < N; ++k) s[k] = g.strides[k][0];
    contiguous_kernel<N><<<blocks_for(g.numel, kThreads, 4), kThreads, 0, stream()>>>(g.numel, s, f);
  } else {
    geometry_kernel<N><<<blocks_for(g.numel), kThreads, 0, stream()>>>(g, f);
  }
  ST_CUDA_LAUNCH_CHECK();
}

// ---- block reductions ----
template <typename T, typename Op>
__device__ inline T warp_reduce(T v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Reduces over the whole block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
template <typename T, typename Op>
__device__ inline T block_reduce(T v, Op op, T identity) {
  __shared__ T shared[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_reduce(v, op);
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int nw = (blockDim.x + 31) >> 5;
  T r = lane < nw ? shared[lane] : identity;
  r = warp_reduce(r, op);
  return r;
}

// ---- host fallbacks (entries without a native kernel yet): contiguous copies in and out ----
Tensor to_host(const Tensor& t);
void from_host(const Tensor& host, Tensor& dev);

}  // namespace st::cudak
