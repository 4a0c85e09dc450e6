#pragma once
// Shared pieces of the CUDA kernels: error checks, the current stream, dtype dispatch
// to device types, strided N-d offset calculation and grid-stride launch helpers.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <string>

#include "backend/backend.h"
#include "backend/common/loop_plan.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/error.h"

namespace st::backend::cuda {

[[noreturn]] void throw_cuda(cudaError_t err, const char* what, const char* file, int line);

#define ST_CUDA_CHECK(expr)                                                                          \
  do {                                                                                               \
    cudaError_t st_err_ = (expr);                                                                    \
    if (st_err_ != cudaSuccess) ::st::backend::cuda::throw_cuda(st_err_, #expr, __FILE__, __LINE__); \
  } while (0)
#define ST_CUDA_LAUNCH_CHECK() ST_CUDA_CHECK(cudaGetLastError())

// The stream kernels of the current device are launched on.
cudaStream_t stream();
// The first device's multiprocessor count (grids sized to fill the machine once).
int sm_count();
// A library handle (cuBLAS, cuBLASLt, cuDNN) of the current device, made by `create()` on first
// use and kept for the process; each call site's lambda type gives it its own table.
template <typename H, typename Create>
H device_handle(Create create) {
  static std::mutex mu;
  static H handles[64] = {};
  int dev = 0;
  const cudaError_t err = cudaGetDevice(&dev);
  if (err != cudaSuccess) throw_cuda(err, "cudaGetDevice", __FILE__, __LINE__);
  std::lock_guard<std::mutex> lock(mu);
  if (!handles[dev]) handles[dev] = create();
  return handles[dev];
}
cudaStream_t t_stream_of(int device);
void set_stream_of(int device, cudaStream_t s);
// Makes `index` the current device of this thread (cheap when it already is).
void use_device(int index);

// Device types per dtype: 16-bit floats use CUDA's own types (same bits).
template <typename T>
struct dev_type {
  using type = T;
};
template <>
struct dev_type<Half> {
  using type = __half;
};
template <>
struct dev_type<BFloat16> {
  using type = __nv_bfloat16;
};

// ST_DISPATCH_ALL with the device's 16-bit float types.
#define STK_DISPATCH_ALL(DT, ...) ST_DISPATCH_ALL_AS(DT, __half, __nv_bfloat16, __VA_ARGS__)

template <typename T>
struct is_half_t {
  static constexpr bool value = false;
};
template <>
struct is_half_t<__half> {
  static constexpr bool value = true;
};
template <>
struct is_half_t<__nv_bfloat16> {
  static constexpr bool value = true;
};
template <typename T>
constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_t<T>::value;

// Value conversions through float (16-bit types) or double.
template <typename T>
__host__ __device__ inline double to_d(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return static_cast<double>(__half2float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return static_cast<double>(__bfloat162float(v));
  else
    return static_cast<double>(v);
}
template <typename T>
__host__ __device__ inline float to_f(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return static_cast<float>(v);
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
  int64_t sizes[kMaxDims];       // outermost first, after coalescing
  int64_t strides[N][kMaxDims];  // element strides per operand
  bool contiguous = false;       // nd == 1 and every operand's stride is 0 or 1
};

// The loop over `shape` for operands with element strides strides[i]
// (backend/common/loop_plan.h), in the fixed arrays a kernel argument needs.
template <int N>
Geometry<N> make_geometry(const Shape& shape, const std::array<const Shape*, N>& strides) {
  const backend::LoopPlan<N> plan = backend::plan_loop<N>(shape, strides);
  if (plan.nd() > kMaxDims) {
    throw ShapeError("cuda: tensors with more than " + std::to_string(kMaxDims) + " non-mergeable dimensions (here " +
                     std::to_string(plan.nd()) + ") are not supported");
  }
  Geometry<N> g;
  g.numel = shape_numel(shape);
  g.nd = plan.nd();
  for (int d = 0; d < g.nd; ++d) {
    g.sizes[d] = plan.sizes[d];
    for (int i = 0; i < N; ++i) g.strides[i][d] = plan.strides[d][i];
  }
  g.contiguous = g.nd == 1;
  for (int i = 0; i < N; ++i) g.contiguous &= g.strides[i][0] == 0 || g.strides[i][0] == 1;
  return g;
}

// Element offsets of flat index i for every operand. I = uint32_t when every index and
// offset of the launch fits (64-bit division is emulated on the GPU and dominates
// strided copies), int64_t otherwise.
template <int N, typename I = int64_t>
__device__ inline void offsets(const Geometry<N>& g, I i, I (&off)[N]) {
  if (g.contiguous) {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = i * static_cast<I>(g.strides[k][0]);
    return;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = g.nd - 1; d >= 0; --d) {
    const I s = static_cast<I>(g.sizes[d]);
    const I idx = i % s;
    i /= s;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += idx * static_cast<I>(g.strides[k][d]);
  }
}

// True when flat indices and every operand offset stay below 2^31.
template <int N>
inline bool fits_32bit(const Geometry<N>& g) {
  if (g.numel >= (int64_t{1} << 31)) return false;
  for (int k = 0; k < N; ++k) {
    int64_t span = 0;
    for (int d = 0; d < g.nd; ++d) {
      if (g.strides[k][d] < 0) return false;
      span += (g.sizes[d] - 1) * g.strides[k][d];
    }
    if (span >= (int64_t{1} << 31)) return false;
  }
  return true;
}

// Runs the block with T = double for float64 tensors and T = float otherwise. A macro
// rather than a generic lambda: nvcc refuses extended __device__ lambdas defined
// inside a generic lambda, and these blocks launch such lambdas.
#define ST_CUDA_FLOAT_CASES(DTYPE, ...) \
  do {                                  \
    if ((DTYPE) == Dtype::Float64) {    \
      using T = double;                 \
      __VA_ARGS__                       \
    } else {                            \
      using T = float;                  \
      __VA_ARGS__                       \
    }                                   \
  } while (0)

// Storage type T and compute type C of the normalisation kernels: float16/bfloat16 rows are
// read and written as they are and computed in float.
#define ST_CUDA_NORM_CASES(DTYPE, ...)       \
  do {                                       \
    if ((DTYPE) == Dtype::Float64) {         \
      using T = double;                      \
      using C = double;                      \
      __VA_ARGS__                            \
    } else if ((DTYPE) == Dtype::BFloat16) { \
      using T = __nv_bfloat16;               \
      using C = float;                       \
      __VA_ARGS__                            \
    } else if ((DTYPE) == Dtype::Float16) {  \
      using T = __half;                      \
      using C = float;                       \
      __VA_ARGS__                            \
    } else {                                 \
      using T = float;                       \
      using C = float;                       \
      __VA_ARGS__                            \
    }                                        \
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
template <int N, typename I, typename F>
__global__ void geometry_kernel(Geometry<N> g, F f) {
  const I n = static_cast<I>(g.numel);
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<I>(gridDim.x) * blockDim.x) {
    I off32[N];
    offsets<N, I>(g, i, off32);
    int64_t off[N];
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = static_cast<int64_t>(off32[k]);
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
    if (fits_32bit(g)) {
      geometry_kernel<N, uint32_t><<<blocks_for(g.numel), kThreads, 0, stream()>>>(g, f);
    } else {
      geometry_kernel<N, int64_t><<<blocks_for(g.numel), kThreads, 0, stream()>>>(g, f);
    }
  }
  ST_CUDA_LAUNCH_CHECK();
}

// ---- vectorized maps over contiguous operands ----
// Bandwidth-bound elementwise kernels need several 16-byte loads in flight per thread to
// reach the copy bandwidth of HBM3; scalar 4-byte loads leave them latency-bound.
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};
// Elements per 16-byte load for the widest of the types.
template <typename... Ts>
constexpr int vec_width() {
  constexpr size_t widest = std::max({sizeof(Ts)...});
  return widest >= 16 ? 1 : static_cast<int>(16 / widest);
}
template <int VEC, typename T>
inline bool vec_aligned(const T* p) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * VEC) == 0;
}
constexpr int kVecUnroll = 2;  // vectors per thread per operand

// out[i] = f(a[i]) for contiguous a and out.
template <int VEC, typename Out, typename A, typename F>
__global__ void vec_map1_kernel(int64_t n, Out* out, const A* a, F f) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x * kVecUnroll) * VEC;
  Pack<A, VEC> va[kVecUnroll];
#pragma unroll
  for (int u = 0; u < kVecUnroll; ++u) {
    const int64_t i = first + (static_cast<int64_t>(u) * blockDim.x + threadIdx.x) * VEC;
    if (i + VEC <= n) va[u] = *reinterpret_cast<const Pack<A, VEC>*>(a + i);
  }
#pragma unroll
  for (int u = 0; u < kVecUnroll; ++u) {
    const int64_t i = first + (static_cast<int64_t>(u) * blockDim.x + threadIdx.x) * VEC;
    if (i + VEC <= n) {
      Pack<Out, VEC> vo;
#pragma unroll
      for (int k = 0; k < VEC; ++k) vo.v[k] = f(va[u].v[k]);
      *reinterpret_cast<Pack<Out, VEC>*>(out + i) = vo;
    } else {
      for (int64_t k = i; k < n; ++k) out[k] = f(a[k]);
    }
  }
}

// out[i] = f(a[i or 0], b[i or 0]) for contiguous operands; a or b may be a broadcast scalar.
template <int VEC, typename Out, typename A, typename B, typename F>
__global__ void vec_map2_kernel(int64_t n, Out* out, const A* a, const B* b, bool a_scalar, bool b_scalar, F f) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x * kVecUnroll) * VEC;
  Pack<A, VEC> va[kVecUnroll];
  Pack<B, VEC> vb[kVecUnroll];
  const A a0 = a_scalar ? a[0] : A{};
  const B b0 = b_scalar ? b[0] : B{};
#pragma unroll
  for (int u = 0; u < kVecUnroll; ++u) {
    const int64_t i = first + (static_cast<int64_t>(u) * blockDim.x + threadIdx.x) * VEC;
    if (i + VEC <= n) {
      if (!a_scalar) va[u] = *reinterpret_cast<const Pack<A, VEC>*>(a + i);
      if (!b_scalar) vb[u] = *reinterpret_cast<const Pack<B, VEC>*>(b + i);
    }
  }
#pragma unroll
  for (int u = 0; u < kVecUnroll; ++u) {
    const int64_t i = first + (static_cast<int64_t>(u) * blockDim.x + threadIdx.x) * VEC;
    if (i + VEC <= n) {
      Pack<Out, VEC> vo;
#pragma unroll
      for (int k = 0; k < VEC; ++k) vo.v[k] = f(a_scalar ? a0 : va[u].v[k], b_scalar ? b0 : vb[u].v[k]);
      *reinterpret_cast<Pack<Out, VEC>*>(out + i) = vo;
    } else {
      for (int64_t k = i; k < n; ++k) out[k] = f(a_scalar ? a0 : a[k], b_scalar ? b0 : b[k]);
    }
  }
}

// Strided operands whose innermost dim is contiguous (stride 1, or 0 for a broadcast
// operand): `gv` is the geometry in units of VEC-element vectors along that dim (its
// size divided by VEC, its strides multiplied by VEC), so offsets() gives the element
// offset of each vector's first element.
// One vector of VEC elements at p, or p[0] repeated for a broadcast operand.
template <int VEC, typename T>
__device__ inline Pack<T, VEC> load_or_splat(const T* p, bool broadcast) {
  if (!broadcast) return *reinterpret_cast<const Pack<T, VEC>*>(p);
  Pack<T, VEC> v;
#pragma unroll
  for (int k = 0; k < VEC; ++k) v.v[k] = p[0];
  return v;
}
template <int VEC, typename I, typename Out, typename A, typename F>
__global__ void vec_strided_map1_kernel(Geometry<2> gv, Out* out, const A* a, F f) {
  const I n = static_cast<I>(gv.numel);
  const bool ab = gv.strides[1][gv.nd - 1] == 0;
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<I>(gridDim.x) * blockDim.x) {
    I off[2];
    offsets<2, I>(gv, i, off);
    const Pack<A, VEC> va = load_or_splat<VEC>(a + off[1], ab);
    Pack<Out, VEC> vo;
#pragma unroll
    for (int k = 0; k < VEC; ++k) vo.v[k] = f(va.v[k]);
    *reinterpret_cast<Pack<Out, VEC>*>(out + off[0]) = vo;
  }
}
template <int VEC, typename I, typename Out, typename A, typename B, typename F>
__global__ void vec_strided_map2_kernel(Geometry<3> gv, Out* out, const A* a, const B* b, F f) {
  const I n = static_cast<I>(gv.numel);
  const bool ab = gv.strides[1][gv.nd - 1] == 0, bb = gv.strides[2][gv.nd - 1] == 0;
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<I>(gridDim.x) * blockDim.x) {
    I off[3];
    offsets<3, I>(gv, i, off);
    const Pack<A, VEC> va = load_or_splat<VEC>(a + off[1], ab);
    const Pack<B, VEC> vb = load_or_splat<VEC>(b + off[2], bb);
    Pack<Out, VEC> vo;
#pragma unroll
    for (int k = 0; k < VEC; ++k) vo.v[k] = f(va.v[k], vb.v[k]);
    *reinterpret_cast<Pack<Out, VEC>*>(out + off[0]) = vo;
  }
}

// The vector geometry of g when its innermost dim can be read in VEC-element vectors by
// every operand (out needs stride 1; inputs stride 1 or 0), nothing otherwise.
template <int VEC, int N>
bool vector_geometry(const Geometry<N>& g, const std::array<const void*, N>& ptrs, const std::array<size_t, N>& sizes,
                     Geometry<N>& gv) {
  const int in = g.nd - 1;
  if (VEC <= 1 || g.sizes[in] % VEC != 0 || g.strides[0][in] != 1) return false;
  for (int k = 0; k < N; ++k) {
    const int64_t st = g.strides[k][in];
    if (st == 0 && k > 0) continue;
    if (st != 1 || reinterpret_cast<uintptr_t>(ptrs[k]) % (sizes[k] * VEC) != 0) return false;
    for (int d = 0; d < in; ++d) {
      if (g.strides[k][d] % VEC != 0) return false;
    }
  }
  gv = g;
  gv.sizes[in] /= VEC;
  gv.numel /= VEC;
  gv.contiguous = false;
  for (int k = 0; k < N; ++k) gv.strides[k][in] *= VEC;
  return true;
}

inline unsigned vec_blocks(int64_t n, int vec) {
  const int64_t per_block = int64_t{kThreads} * kVecUnroll * vec;
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

// out = f(a) over a geometry of (out, a): vector loads when both are contiguous and
// aligned, the strided loop otherwise.
template <typename Out, typename A, typename F>
void launch_map1(const Geometry<2>& g, Out* out, const A* a, F f) {
  if (g.numel <= 0) return;
  constexpr int V = vec_width<Out, A>();
  const int64_t n = g.numel;
  if (V > 1 && g.contiguous && g.strides[0][0] == 1 && g.strides[1][0] == 1 && vec_aligned<V>(out) &&
      vec_aligned<V>(a) && n / (int64_t{kThreads} * kVecUnroll * V) < (int64_t{1} << 31)) {
    vec_map1_kernel<V><<<vec_blocks(n, V), kThreads, 0, stream()>>>(n, out, a, f);
    ST_CUDA_LAUNCH_CHECK();
    return;
  }
  Geometry<2> gv;
  if (vector_geometry<V, 2>(g, {out, a}, {sizeof(Out), sizeof(A)}, gv)) {
    if (fits_32bit(g)) {
      vec_strided_map1_kernel<V, uint32_t><<<blocks_for(gv.numel), kThreads, 0, stream()>>>(gv, out, a, f);
    } else {
      vec_strided_map1_kernel<V, int64_t><<<blocks_for(gv.numel), kThreads, 0, stream()>>>(gv, out, a, f);
    }
    ST_CUDA_LAUNCH_CHECK();
    return;
  }
  launch_geometry<2>(g, [=] __device__(const int64_t(&off)[2]) { out[off[0]] = f(a[off[1]]); });
}

template <typename Out, typename A, typename B, typename F>
void launch_map2(const Geometry<3>& g, Out* out, const A* a, const B* b, F f) {
  if (g.numel <= 0) return;
  constexpr int V = vec_width<Out, A, B>();
  const int64_t n = g.numel;
  const bool as = g.strides[1][0] == 0, bs = g.strides[2][0] == 0;
  if (V > 1 && g.contiguous && g.strides[0][0] == 1 && vec_aligned<V>(out) && (as || vec_aligned<V>(a)) &&
      (bs || vec_aligned<V>(b)) && n / (int64_t{kThreads} * kVecUnroll * V) < (int64_t{1} << 31)) {
    vec_map2_kernel<V><<<vec_blocks(n, V), kThreads, 0, stream()>>>(n, out, a, b, as, bs, f);
    ST_CUDA_LAUNCH_CHECK();
    return;
  }
  Geometry<3> gv;
  if (vector_geometry<V, 3>(g, {out, a, b}, {sizeof(Out), sizeof(A), sizeof(B)}, gv)) {
    if (fits_32bit(g)) {
      vec_strided_map2_kernel<V, uint32_t><<<blocks_for(gv.numel), kThreads, 0, stream()>>>(gv, out, a, b, f);
    } else {
      vec_strided_map2_kernel<V, int64_t><<<blocks_for(gv.numel), kThreads, 0, stream()>>>(gv, out, a, b, f);
    }
    ST_CUDA_LAUNCH_CHECK();
    return;
  }
  launch_geometry<3>(g, [=] __device__(const int64_t(&off)[3]) { out[off[0]] = f(a[off[1]], b[off[2]]); });
}

// Calls f(storage, accumulator) with values of the floating dtype dt's device type and the
// type to compute it in: float64 in double, float32 and the 16-bit types in float.
template <typename F>
void dispatch_float_accum(Dtype dt, F f) {
  switch (dt) {
    case Dtype::Float64:
      return f(double{}, double{});
    case Dtype::Float16:
      return f(__half{}, float{});
    case Dtype::BFloat16:
      return f(__nv_bfloat16{}, float{});
    default:
      return f(float{}, float{});
  }
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

// ---- convolution geometry ----
// Calls f(i, j, h, w) for every kernel tap (i, j) of output (oh, ow) that reads an input pixel
// (h, w) inside the input (padding skipped), taps in (i, j) order: the forward's window.
template <typename F>
__device__ inline void for_each_window_input(const backend::Conv2dGeom& G, int64_t oh, int64_t ow, F f) {
  for (int64_t i = 0; i < G.kh; ++i) {
    const int64_t h = oh * G.sh - G.ph + i * G.dh;
    if (h < 0 || h >= G.H) continue;
    for (int64_t j = 0; j < G.kw; ++j) {
      const int64_t w = ow * G.sw - G.pw + j * G.dw;
      if (w < 0 || w >= G.W) continue;
      f(i, j, h, w);
    }
  }
}

// Calls f(i, j, oh, ow) for every kernel tap (i, j) whose output position (oh, ow) reads
// input pixel (h, w): the gather form of a convolution's input gradient, without atomics.
template <typename F>
__device__ inline void for_each_covering_output(const backend::Conv2dGeom& G, int64_t h, int64_t w, F f) {
  for (int64_t i = 0; i < G.kh; ++i) {
    const int64_t hh = h + G.ph - i * G.dh;
    if (hh < 0 || hh % G.sh != 0) continue;
    const int64_t oh = hh / G.sh;
    if (oh >= G.OH) continue;
    for (int64_t j = 0; j < G.kw; ++j) {
      const int64_t ww = w + G.pw - j * G.dw;
      if (ww < 0 || ww % G.sw != 0) continue;
      const int64_t ow = ww / G.sw;
      if (ow >= G.OW) continue;
      f(i, j, oh, ow);
    }
  }
}

// ---- host <-> device transfers of whole tensors (cross-device copies) ----
Tensor to_host(const Tensor& t);
void from_host(const Tensor& host, Tensor& dev);

}  // namespace st::backend::cuda
