#pragma once
// Flash attention on tensor cores (FlashAttention-2's recurrence through WMMA fragments):
// softmax(scale q k^T [+ causal mask]) v for (batch, L, D) / (batch, S, D) operands without an
// (L, S) buffer. The forward walks key tiles with an online softmax and keeps each row's
// log-sum-exp; the backward recomputes the probabilities tile by tile, once per key tile for dK
// and dV and once per query tile for dQ (two kernels, no atomics, deterministic).
//
// Layout: 64-row tiles, 4 warps of 16 rows; fragments are 16x16 (k 16 for the 16-bit types,
// k 8 with TF32 rounding for float32); accumulation and softmax in float32. Each warp stages
// its 16 x 64 score strip in shared memory, where two lanes own a row (interleaved columns).
// Plain header of templates and raw-pointer launchers, so a standalone check can include it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <type_traits>

namespace st::cudak::flash {

namespace wmma = nvcuda::wmma;

constexpr int kTile = 64;   // query rows and key columns per tile
constexpr int kWarps = kTile / 16;
constexpr int kThreads = kWarps * 32;
constexpr float kLog2e = 1.4426950408889634f;

template <typename T> struct MmaOf;
template <> struct MmaOf<float> { using E = wmma::precision::tf32; static constexpr int K = 8; };
template <> struct MmaOf<__half> { using E = __half; static constexpr int K = 16; };
template <> struct MmaOf<__nv_bfloat16> { using E = __nv_bfloat16; static constexpr int K = 16; };

template <typename T> using FragC = wmma::fragment<wmma::accumulator, 16, 16, MmaOf<T>::K, float>;

template <typename T>
__device__ inline T from_float(float x) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(x);
  else return x;
}

// Shared-memory leading dims (elements): rows of 16-bit operands padded by 16 bytes against
// bank conflicts; every fragment origin stays 32-byte aligned as WMMA requires.
template <int D> constexpr int kLd = D + 8;              // q/k/v/dO tiles
constexpr int kPld = kTile + 8;                          // probability / dS tiles
template <int D> constexpr int kSld = (D > kTile ? D : kTile) + 4;  // float staging strip

// acc[n] += A (16 x KDIM) * B (KDIM x 16 n): A row-major at a (A[m][k] = a[m lda + k]) or
// column-major (a[k lda + m]); B row-major (b[k ldb + n]) or column-major (b[n ldb + k]).
template <typename T, bool ARow, bool BRow, int N, int KDIM>
__device__ inline void warp_gemm(FragC<T> (&acc)[N], const T* a, unsigned lda, const T* b, unsigned ldb) {
  using LA = std::conditional_t<ARow, wmma::row_major, wmma::col_major>;
  using LB = std::conditional_t<BRow, wmma::row_major, wmma::col_major>;
  constexpr int K = MmaOf<T>::K;
#pragma unroll
  for (int kk = 0; kk < KDIM; kk += K) {
    wmma::fragment<wmma::matrix_a, 16, 16, K, typename MmaOf<T>::E, LA> fa;
    wmma::load_matrix_sync(fa, ARow ? a + kk : a + kk * lda, lda);
    if constexpr (std::is_same_v<T, float>) {
#pragma unroll
      for (int t = 0; t < fa.num_elements; ++t) fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
    }
#pragma unroll
    for (int n = 0; n < N; ++n) {
      wmma::fragment<wmma::matrix_b, 16, 16, K, typename MmaOf<T>::E, LB> fb;
      wmma::load_matrix_sync(fb, BRow ? b + kk * ldb + n * 16 : b + n * 16 * ldb + kk, ldb);
      if constexpr (std::is_same_v<T, float>) {
#pragma unroll
        for (int t = 0; t < fb.num_elements; ++t) fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
      }
      wmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
  }
}

template <typename F, int N>
__device__ inline void zero(F (&acc)[N]) {
#pragma unroll
  for (int n = 0; n < N; ++n) wmma::fill_fragment(acc[n], 0.0f);
}

// Rows [r0, r0 + 64) of a contiguous (rows, D) matrix into a shared tile (leading dim kLd<D>),
// 16 bytes per load, zeros past `rows`.
template <typename T, int D>
__device__ inline void load_tile(T* dst, const T* src, int r0, int rows) {
  constexpr int kVec = 16 / sizeof(T);
  constexpr int kPerRow = D / kVec;
  for (int i = threadIdx.x; i < kTile * kPerRow; i += kThreads) {
    const int r = i / kPerRow, c = (i - r * kPerRow) * kVec;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (r0 + r < rows) val = *reinterpret_cast<const uint4*>(src + static_cast<int64_t>(r0 + r) * D + c);
    *reinterpret_cast<uint4*>(dst + r * kLd<D> + c) = val;
  }
}

// 16 x D float strip (staged fragments) to rows row0.. of a (rows, D) output: two lanes per
// row, interleaved columns.
template <typename T, int D>
__device__ inline void write_strip(T* dst, const float* strip, int row0, int rows) {
  const int lane = threadIdx.x & 31, r = lane >> 1, half = lane & 1;
  if (row0 + r >= rows) return;
  T* out = dst + static_cast<int64_t>(row0 + r) * D;
#pragma unroll
  for (int i = 0; i < D / 2; ++i) out[half + 2 * i] = from_float<T>(strip[r * kSld<D> + half + 2 * i]);
}

// Number of key tiles a query tile starting at q0 sees.
__device__ inline int key_tiles(int q0, int L, int S, bool causal) {
  const int n = (S + kTile - 1) / kTile;
  if (!causal) return n;
  const int last = min(q0 + kTile, L) - 1;
  return min(n, last / kTile + 1);
}

template <typename T, int D>
struct FwdSmem {
  static constexpr size_t bytes = 3 * sizeof(T) * kTile * kLd<D> + sizeof(float) * kWarps * 16 * kSld<D> +
                                  sizeof(T) * kWarps * 16 * kPld;
};

// grid.x = batch * query tiles; out (batch, L, D); lse (batch, L) natural-log log-sum-exp of
// each row's scaled, masked scores (-inf for a row with nothing visible; its output is 0).
template <typename T, int D>
__global__ void __launch_bounds__(kThreads) flash_forward(const T* __restrict__ q, const T* __restrict__ k,
                                                          const T* __restrict__ v, T* __restrict__ out,
                                                          float* __restrict__ lse, int L, int S, float scale,
                                                          bool causal) {
  extern __shared__ __align__(128) unsigned char smem[];
  T* const qs = reinterpret_cast<T*>(smem);
  T* const ks = qs + kTile * kLd<D>;
  T* const vs = ks + kTile * kLd<D>;
  float* const strips = reinterpret_cast<float*>(vs + kTile * kLd<D>);
  T* const probs = reinterpret_cast<T*>(strips + kWarps * 16 * kSld<D>);

  const int tiles = (L + kTile - 1) / kTile;
  const int64_t b = blockIdx.x / tiles;
  const int q0 = static_cast<int>(blockIdx.x - b * tiles) * kTile;
  q += b * L * D;
  k += b * S * D;
  v += b * S * D;
  out += b * L * D;
  lse += b * L;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 1, half = lane & 1;
  const int row = q0 + warp * 16 + r;
  float* const strip = strips + warp * 16 * kSld<D>;
  T* const p = probs + warp * 16 * kPld;
  const float scale2 = scale * kLog2e;

  load_tile<T, D>(qs, q, q0, L);
  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  const int n_tiles = key_tiles(q0, L, S, causal);
  for (int j = 0; j < n_tiles; ++j) {
    const int c0 = j * kTile;
    __syncthreads();
    load_tile<T, D>(ks, k, c0, S);
    load_tile<T, D>(vs, v, c0, S);
    __syncthreads();
    {
      FragC<T> acc[kTile / 16];
      zero(acc);
      warp_gemm<T, true, false, kTile / 16, D>(acc, qs + warp * 16 * kLd<D>, kLd<D>, ks, kLd<D>);
      for (int n = 0; n < kTile / 16; ++n) wmma::store_matrix_sync(strip + n * 16, acc[n], kSld<D>, wmma::mem_row_major);
    }
    __syncwarp();
    float s[kTile / 2];
    float mt = -INFINITY;
#pragma unroll
    for (int t = 0; t < kTile / 2; ++t) {
      const int col = c0 + half + 2 * t;
      const bool visible = col < S && (!causal || col <= row);
      s[t] = visible ? strip[r * kSld<D> + half + 2 * t] * scale2 : -INFINITY;
      mt = fmaxf(mt, s[t]);
    }
    mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
    const float m_new = fmaxf(m, mt);
    const float base = m_new == -INFINITY ? 0.0f : m_new;  // nothing visible yet: p = 0
    const float alpha = exp2f(m - base);
    float sum = 0.0f;
#pragma unroll
    for (int t = 0; t < kTile / 2; ++t) {
      const float e = exp2f(s[t] - base);
      sum += e;
      p[r * kPld + half + 2 * t] = from_float<T>(e);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    l = l * alpha + sum;
    m = m_new;
    __syncwarp();
    {
      FragC<T> acc[D / 16];
      zero(acc);
      warp_gemm<T, true, true, D / 16, kTile>(acc, p, kPld, vs, kLd<D>);
      for (int n = 0; n < D / 16; ++n) wmma::store_matrix_sync(strip + n * 16, acc[n], kSld<D>, wmma::mem_row_major);
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] = o[i] * alpha + strip[r * kSld<D> + half + 2 * i];
  }
  if (row < L) {
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    T* const dst = out + static_cast<int64_t>(row) * D;
#pragma unroll
    for (int i = 0; i < D / 2; ++i) dst[half + 2 * i] = from_float<T>(o[i] * inv);
    if (half == 0) lse[row] = l > 0.0f ? (m + log2f(l)) / kLog2e : -INFINITY;
  }
}

template <typename T, int D>
struct BwdKvSmem {
  static constexpr size_t bytes = 4 * sizeof(T) * kTile * kLd<D> + 2 * sizeof(T) * kTile * kPld +
                                  sizeof(float) * kWarps * 16 * kSld<D> + 2 * sizeof(float) * kTile;
};

// dK and dV: grid.x = batch * key tiles; each block walks the query tiles that see its keys.
// lse, delta (= rowsum(dO * O)) are (batch, L) float32; dk, dv (batch, S, D).
template <typename T, int D>
__global__ void __launch_bounds__(kThreads) flash_backward_kv(const T* __restrict__ q, const T* __restrict__ k,
                                                              const T* __restrict__ v, const T* __restrict__ dout,
                                                              const float* __restrict__ lse,
                                                              const float* __restrict__ delta, T* __restrict__ dk,
                                                              T* __restrict__ dv, int L, int S, float scale,
                                                              bool causal) {
  extern __shared__ __align__(128) unsigned char smem[];
  T* const ks = reinterpret_cast<T*>(smem);
  T* const vs = ks + kTile * kLd<D>;
  T* const qs = vs + kTile * kLd<D>;
  T* const dos = qs + kTile * kLd<D>;
  T* const ps = dos + kTile * kLd<D>;
  T* const dss = ps + kTile * kPld;
  float* const strips = reinterpret_cast<float*>(dss + kTile * kPld);
  float* const lse_s = strips + kWarps * 16 * kSld<D>;
  float* const delta_s = lse_s + kTile;

  const int tiles = (S + kTile - 1) / kTile;
  const int64_t b = blockIdx.x / tiles;
  const int c0 = static_cast<int>(blockIdx.x - b * tiles) * kTile;
  q += b * L * D;
  k += b * S * D;
  v += b * S * D;
  dout += b * L * D;
  lse += b * L;
  delta += b * L;
  dk += b * S * D;
  dv += b * S * D;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 1, half = lane & 1;
  float* const strip = strips + warp * 16 * kSld<D>;
  const float scale2 = scale * kLog2e;

  load_tile<T, D>(ks, k, c0, S);
  load_tile<T, D>(vs, v, c0, S);
  FragC<T> dk_acc[D / 16], dv_acc[D / 16];
  zero(dk_acc);
  zero(dv_acc);
  const int q_tiles = (L + kTile - 1) / kTile;
  for (int i = causal ? c0 / kTile : 0; i < q_tiles; ++i) {
    const int r0 = i * kTile;
    __syncthreads();
    load_tile<T, D>(qs, q, r0, L);
    load_tile<T, D>(dos, dout, r0, L);
    for (int t = threadIdx.x; t < kTile; t += kThreads) {
      const bool in = r0 + t < L;
      lse_s[t] = in ? lse[r0 + t] * kLog2e : 0.0f;
      delta_s[t] = in ? delta[r0 + t] : 0.0f;
    }
    __syncthreads();
    const int lr = warp * 16 + r, row = r0 + lr;
    {
      FragC<T> acc[kTile / 16];
      zero(acc);
      warp_gemm<T, true, false, kTile / 16, D>(acc, qs + warp * 16 * kLd<D>, kLd<D>, ks, kLd<D>);
      for (int n = 0; n < kTile / 16; ++n) wmma::store_matrix_sync(strip + n * 16, acc[n], kSld<D>, wmma::mem_row_major);
    }
    __syncwarp();
    float pr[kTile / 2];
    const float row_lse = lse_s[lr];
#pragma unroll
    for (int t = 0; t < kTile / 2; ++t) {
      const int col = c0 + half + 2 * t;
      const bool visible = row < L && col < S && (!causal || col <= row) && row_lse != -INFINITY;
      pr[t] = visible ? exp2f(strip[r * kSld<D> + half + 2 * t] * scale2 - row_lse) : 0.0f;
      ps[lr * kPld + half + 2 * t] = from_float<T>(pr[t]);
    }
    __syncwarp();
    {
      FragC<T> acc[kTile / 16];
      zero(acc);
      warp_gemm<T, true, false, kTile / 16, D>(acc, dos + warp * 16 * kLd<D>, kLd<D>, vs, kLd<D>);
      for (int n = 0; n < kTile / 16; ++n) wmma::store_matrix_sync(strip + n * 16, acc[n], kSld<D>, wmma::mem_row_major);
    }
    __syncwarp();
    const float row_delta = delta_s[lr];
#pragma unroll
    for (int t = 0; t < kTile / 2; ++t) {
      const float ds = pr[t] * (strip[r * kSld<D> + half + 2 * t] - row_delta) * scale;
      dss[lr * kPld + half + 2 * t] = from_float<T>(ds);
    }
    __syncthreads();
    // This warp's 16 keys: dV += P^T dO, dK += dS^T Q (P^T, dS^T read column-major).
    warp_gemm<T, false, true, D / 16, kTile>(dv_acc, ps + warp * 16, kPld, dos, kLd<D>);
    warp_gemm<T, false, true, D / 16, kTile>(dk_acc, dss + warp * 16, kPld, qs, kLd<D>);
  }
  for (int n = 0; n < D / 16; ++n) wmma::store_matrix_sync(strip + n * 16, dv_acc[n], kSld<D>, wmma::mem_row_major);
  __syncwarp();
  write_strip<T, D>(dv, strip, c0 + warp * 16, S);
  __syncwarp();
  for (int n = 0; n < D / 16; ++n) wmma::store_matrix_sync(strip + n * 16, dk_acc[n], kSld<D>, wmma::mem_row_major);
  __syncwarp();
  write_strip<T, D>(dk, strip, c0 + warp * 16, S);
}

template <typename T, int D>
struct BwdQSmem {
  static constexpr size_t bytes = 4 * sizeof(T) * kTile * kLd<D> + sizeof(T) * kWarps * 16 * kPld +
                                  sizeof(float) * kWarps * 16 * kSld<D>;
};

// dQ: grid.x = batch * query tiles; each block walks the key tiles its rows see.
template <typename T, int D>
__global__ void __launch_bounds__(kThreads) flash_backward_q(const T* __restrict__ q, const T* __restrict__ k,
                                                             const T* __restrict__ v, const T* __restrict__ dout,
                                                             const float* __restrict__ lse,
                                                             const float* __restrict__ delta, T* __restrict__ dq,
                                                             int L, int S, float scale, bool causal) {
  extern __shared__ __align__(128) unsigned char smem[];
  T* const qs = reinterpret_cast<T*>(smem);
  T* const dos = qs + kTile * kLd<D>;
  T* const ks = dos + kTile * kLd<D>;
  T* const vs = ks + kTile * kLd<D>;
  T* const dsw = vs + kTile * kLd<D>;
  float* const strips = reinterpret_cast<float*>(dsw + kWarps * 16 * kPld);

  const int tiles = (L + kTile - 1) / kTile;
  const int64_t b = blockIdx.x / tiles;
  const int q0 = static_cast<int>(blockIdx.x - b * tiles) * kTile;
  q += b * L * D;
  k += b * S * D;
  v += b * S * D;
  dout += b * L * D;
  lse += b * L;
  delta += b * L;
  dq += b * L * D;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 1, half = lane & 1;
  const int row = q0 + warp * 16 + r;
  float* const strip = strips + warp * 16 * kSld<D>;
  T* const ds_strip = dsw + warp * 16 * kPld;
  const float scale2 = scale * kLog2e;
  const float row_lse = row < L ? lse[row] * kLog2e : -INFINITY;
  const float row_delta = row < L ? delta[row] : 0.0f;

  load_tile<T, D>(qs, q, q0, L);
  load_tile<T, D>(dos, dout, q0, L);
  FragC<T> dq_acc[D / 16];
  zero(dq_acc);
  const int n_tiles = key_tiles(q0, L, S, causal);
  for (int j = 0; j < n_tiles; ++j) {
    const int c0 = j * kTile;
    __syncthreads();
    load_tile<T, D>(ks, k, c0, S);
    load_tile<T, D>(vs, v, c0, S);
    __syncthreads();
    {
      FragC<T> acc[kTile / 16];
      zero(acc);
      warp_gemm<T, true, false, kTile / 16, D>(acc, qs + warp * 16 * kLd<D>, kLd<D>, ks, kLd<D>);
      for (int n = 0; n < kTile / 16; ++n) wmma::store_matrix_sync(strip + n * 16, acc[n], kSld<D>, wmma::mem_row_major);
    }
    __syncwarp();
    float pr[kTile / 2];
#pragma unroll
    for (int t = 0; t < kTile / 2; ++t) {
      const int col = c0 + half + 2 * t;
      const bool visible = row < L && col < S && (!causal || col <= row) && row_lse != -INFINITY;
      pr[t] = visible ? exp2f(strip[r * kSld<D> + half + 2 * t] * scale2 - row_lse) : 0.0f;
    }
    __syncwarp();
    {
      FragC<T> acc[kTile / 16];
      zero(acc);
      warp_gemm<T, true, false, kTile / 16, D>(acc, dos + warp * 16 * kLd<D>, kLd<D>, vs, kLd<D>);
      for (int n = 0; n < kTile / 16; ++n) wmma::store_matrix_sync(strip + n * 16, acc[n], kSld<D>, wmma::mem_row_major);
    }
    __syncwarp();
#pragma unroll
    for (int t = 0; t < kTile / 2; ++t) {
      const float ds = pr[t] * (strip[r * kSld<D> + half + 2 * t] - row_delta) * scale;
      ds_strip[r * kPld + half + 2 * t] = from_float<T>(ds);
    }
    __syncwarp();
    warp_gemm<T, true, true, D / 16, kTile>(dq_acc, ds_strip, kPld, ks, kLd<D>);
  }
  for (int n = 0; n < D / 16; ++n) wmma::store_matrix_sync(strip + n * 16, dq_acc[n], kSld<D>, wmma::mem_row_major);
  __syncwarp();
  write_strip<T, D>(dq, strip, q0 + warp * 16, L);
}

// ---- launchers (raw device pointers; all on `stream`) ----

template <typename K>
inline cudaError_t allow_smem(K kernel, size_t bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

template <typename T, int D>
cudaError_t forward(const T* q, const T* k, const T* v, T* out, float* lse, int64_t batch, int L, int S, float scale,
                    bool causal, cudaStream_t stream) {
  constexpr size_t bytes = FwdSmem<T, D>::bytes;
  static const cudaError_t ready = allow_smem(flash_forward<T, D>, bytes);
  if (ready != cudaSuccess) return ready;
  const int64_t blocks = batch * ((L + kTile - 1) / kTile);
  flash_forward<T, D><<<static_cast<unsigned>(blocks), kThreads, bytes, stream>>>(q, k, v, out, lse, L, S, scale, causal);
  return cudaGetLastError();
}

template <typename T, int D>
cudaError_t backward(const T* q, const T* k, const T* v, const T* dout, const float* lse, const float* delta, T* dq,
                     T* dk, T* dv, int64_t batch, int L, int S, float scale, bool causal, cudaStream_t stream) {
  constexpr size_t kv_bytes = BwdKvSmem<T, D>::bytes, q_bytes = BwdQSmem<T, D>::bytes;
  static const cudaError_t ready_kv = allow_smem(flash_backward_kv<T, D>, kv_bytes);
  static const cudaError_t ready_q = allow_smem(flash_backward_q<T, D>, q_bytes);
  if (ready_kv != cudaSuccess) return ready_kv;
  if (ready_q != cudaSuccess) return ready_q;
  const int64_t kv_blocks = batch * ((S + kTile - 1) / kTile), q_blocks = batch * ((L + kTile - 1) / kTile);
  flash_backward_kv<T, D><<<static_cast<unsigned>(kv_blocks), kThreads, kv_bytes, stream>>>(q, k, v, dout, lse, delta,
                                                                                           dk, dv, L, S, scale, causal);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  flash_backward_q<T, D><<<static_cast<unsigned>(q_blocks), kThreads, q_bytes, stream>>>(q, k, v, dout, lse, delta, dq,
                                                                                         L, S, scale, causal);
  return cudaGetLastError();
}

}  // namespace st::cudak::flash
