#pragma once
// Flash attention on tensor cores (FlashAttention-2's recurrence with mma.sync m16n8k16):
// softmax(scale q k^T [+ causal mask]) v for (batch, L, D) / (batch, S, D) float16 or bfloat16
// operands (m16n8k16), or float32 ones computed in TF32 (m16n8k8), with no (L, S) buffer. The forward walks key tiles
// with an online softmax and keeps each row's log-sum-exp; the backward recomputes the probabilities tile by tile, once
// per key tile for dK and dV and once per query tile for dQ (two kernels, no atomics, deterministic).
//
// Layout: 64-row tiles in shared memory (rows padded by 16 bytes so ldmatrix is conflict-free),
// filled with cp.async two tiles deep; 4 warps own 16 rows each. Scores, probabilities and
// their gradients never leave registers: an m16n8 accumulator pair holds exactly the operand
// fragment of the next product (rows g and g + 8, columns 2t and 2t + 1 of each 8-column tile,
// g = lane / 4, t = lane % 4); with TF32's 8-deep k the chunk of keys 2t, 2t + 1 stands at
// k = t, t + 4, and v's rows are read in that order. Accumulation and softmax in float32.
// Operands are (batch, heads, rows, D) with any strides but a unit last one, so head views of a
// packed q/k/v projection are read and written in place.
// Plain header of templates and raw-pointer launchers, so a standalone check can include it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace st::backend::cuda::flash {

constexpr int kTile = 64;  // query rows and key columns per tile
constexpr int kWarps = kTile / 16;
constexpr int kThreads = kWarps * 32;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <typename T>
constexpr int kVec = 16 / static_cast<int>(sizeof(T));  // elements per 16 bytes
template <typename T>
constexpr int kK = std::is_same_v<T, float> ? 8 : 16;  // k of one mma
template <typename T, int D>
constexpr int kLd = D + kVec<T>;  // shared tile row, elements
template <typename T, int D>
constexpr int kTileElems = kTile * kLd<T, D>;

// Element strides of one operand: batch, head and row (the last dim is unit-stride; every row
// starts 16-byte aligned).
struct Strides {
  int64_t b, h, r;
};
// Where the operands live: grid rows run over batch * heads; o is out (forward) and dout
// (backward); lse and delta follow stat.
struct Layout {
  int heads, L, S;
  Strides q, k, v, o, stat, dq, dk, dv;
  __device__ int64_t at(const Strides& s, int64_t bh) const { return (bh / heads) * s.b + (bh % heads) * s.h; }
};

__device__ inline uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// ---- cp.async tile loads ----
// Rows [r0, r0 + 64) of a (rows, D) matrix with row stride rs into a shared tile, zeros past `rows`.
template <typename T, int D>
__device__ inline void cp_tile(T* dst, const T* src, int r0, int rows, int64_t rs) {
  constexpr int kPerRow = D / kVec<T>;
  for (int i = threadIdx.x; i < kTile * kPerRow; i += kThreads) {
    const int r = i / kPerRow, c = (i - r * kPerRow) * kVec<T>;
    const bool in = r0 + r < rows;
    const T* g = src + static_cast<int64_t>(in ? r0 + r : 0) * rs + c;  // a valid address even when filling zeros
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst + r * kLd<T, D> + c)), "l"(g),
                 "r"(in ? 16 : 0));
  }
}
__device__ inline void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ---- fragments ----
__device__ inline uint32_t to_tf32(uint32_t bits) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(bits)));
  return r;
}
template <typename T>
__device__ inline void ldsm_x4(uint32_t (&r)[4], const T* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int i = 0; i < 4; ++i) r[i] = to_tf32(r[i]);
  }
}
// A (16 x k) at (r0, c0) of a row-major shared tile: a0..a3 = rows g / g+8, first / second
// half of the k chunk (ldmatrix's 8 x 16-byte blocks are exactly these fragments, 16-bit or
// 32-bit elements alike).
template <typename T, int D>
__device__ inline void load_a(uint32_t (&a)[4], const T* tile, int r0, int c0) {
  const int lane = threadIdx.x & 31, mi = lane >> 3, rr = lane & 7;
  ldsm_x4(a, tile + (r0 + rr + (mi & 1) * 8) * kLd<T, D> + c0 + (mi >> 1) * kVec<T>);
}
// B fragments of two 8-column tiles (n0, n0 + 8) for the k chunk at k0 where the shared tile
// holds B transposed (row = n, column = k; keys x dims for q k^T): b[0..1], b[2..3].
template <typename T, int D>
__device__ inline void load_b_nk(uint32_t (&b)[4], const T* tile, int n0, int k0) {
  const int lane = threadIdx.x & 31, mi = lane >> 3, rr = lane & 7;
  ldsm_x4(b, tile + (n0 + rr + (mi >> 1) * 8) * kLd<T, D> + k0 + (mi & 1) * kVec<T>);
}
// The same where the shared tile holds B as is (row = k, column = n; keys x dims for p v).
template <typename T, int D>
__device__ inline void load_b_kn(uint32_t (&b)[4], const T* tile, int k0, int n0) {
  const int lane = threadIdx.x & 31;
  if constexpr (std::is_same_v<T, float>) {
    // k order 2t, 2t + 1 (see the top): rows k0 + 2t and k0 + 2t + 1, column g.
    const int g = lane >> 2, t = lane & 3;
    const T* p = tile + (k0 + 2 * t) * kLd<T, D> + n0 + g;
    b[0] = to_tf32(__float_as_uint(p[0]));
    b[1] = to_tf32(__float_as_uint(p[kLd<T, D>]));
    b[2] = to_tf32(__float_as_uint(p[8]));
    b[3] = to_tf32(__float_as_uint(p[kLd<T, D> + 8]));
  } else {
    const int mi = lane >> 3, rr = lane & 7;
    const T* p = tile + (k0 + rr + (mi & 1) * 8) * kLd<T, D> + n0 + (mi >> 1) * 8;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                 : "r"(smem_u32(p)));
  }
}

// c += a b for one 16 x 8 tile.
template <typename T>
__device__ inline void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

template <typename T>
__device__ inline uint32_t pack(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// Operand fragment of the k chunk c (16 columns, or 8 for TF32) of a 16 x 64 accumulator strip.
template <typename T>
__device__ inline void as_a(uint32_t (&a)[4], const float (&x)[8][4], int c) {
  if constexpr (std::is_same_v<T, float>) {
    a[0] = to_tf32(__float_as_uint(x[c][0]));
    a[1] = to_tf32(__float_as_uint(x[c][2]));
    a[2] = to_tf32(__float_as_uint(x[c][1]));
    a[3] = to_tf32(__float_as_uint(x[c][3]));
  } else {
    a[0] = pack<T>(x[2 * c][0], x[2 * c][1]);
    a[1] = pack<T>(x[2 * c][2], x[2 * c][3]);
    a[2] = pack<T>(x[2 * c + 1][0], x[2 * c + 1][1]);
    a[3] = pack<T>(x[2 * c + 1][2], x[2 * c + 1][3]);
  }
}

// acc (16 x 64) = A (this warp's 16 rows at row r0 of tile `a`) times B^T over D, where tile
// `b` holds 64 rows of B^T (scores q k^T, dP = dO v^T, and their transposes).
template <typename T, int D>
__device__ inline void strip_nt(float (&acc)[8][4], const T* a, int r0, const T* b) {
#pragma unroll
  for (int n = 0; n < 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
#pragma unroll
  for (int kc = 0; kc < D / kK<T>; ++kc) {
    uint32_t fa[4];
    load_a<T, D>(fa, a, r0, kc * kK<T>);
#pragma unroll
    for (int np = 0; np < 4; ++np) {
      uint32_t fb[4];
      load_b_nk<T, D>(fb, b, np * 16, kc * kK<T>);
      mma<T>(acc[2 * np], fa, fb[0], fb[1]);
      mma<T>(acc[2 * np + 1], fa, fb[2], fb[3]);
    }
  }
}

// out (16 x D, D/8 tiles) += x (16 x 64, registers) times the 64 x D tile `b` (row = k).
template <typename T, int D>
__device__ inline void strip_nn(float (&out)[D / 8][4], const float (&x)[8][4], const T* b) {
#pragma unroll
  for (int kc = 0; kc < kTile / kK<T>; ++kc) {
    uint32_t fa[4];
    as_a<T>(fa, x, kc);
#pragma unroll
    for (int np = 0; np < D / 16; ++np) {
      uint32_t fb[4];
      load_b_kn<T, D>(fb, b, kc * kK<T>, np * 16);
      mma<T>(out[2 * np], fa, fb[0], fb[1]);
      mma<T>(out[2 * np + 1], fa, fb[2], fb[3]);
    }
  }
}

// Rows row0 (values x[.][0..1]) and row0 + 8 (x[.][2..3]) of a (rows, D) output, row stride rs.
template <typename T, int D>
__device__ inline void store_rows(T* dst, const float (&x)[D / 8][4], int row0, int rows, int64_t rs, float s0,
                                  float s1) {
  const int t = threadIdx.x & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + 8 * h;
    if (row >= rows) continue;
    const float s = h ? s1 : s0;
    T* const out = dst + static_cast<int64_t>(row) * rs + 2 * t;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      if constexpr (std::is_same_v<T, float>) {
        *reinterpret_cast<float2*>(out + n * 8) = make_float2(x[n][2 * h] * s, x[n][2 * h + 1] * s);
      } else {
        *reinterpret_cast<uint32_t*>(out + n * 8) = pack<T>(x[n][2 * h] * s, x[n][2 * h + 1] * s);
      }
    }
  }
}

template <int D>
__device__ inline void zero(float (&x)[D / 8][4]) {
#pragma unroll
  for (int n = 0; n < D / 8; ++n) x[n][0] = x[n][1] = x[n][2] = x[n][3] = 0.0f;
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
  static constexpr size_t bytes = 5 * sizeof(T) * kTileElems<T, D>;
};

// grid.x = batch * query tiles; out (batch, L, D); lse (batch, L) natural-log log-sum-exp of
// each row's scaled, masked scores (-inf for a row with nothing visible; its output is 0).
template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_forward(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ out,
                  float* __restrict__ lse, const Layout g, float scale, bool causal) {
  const int L = g.L, S = g.S;
  extern __shared__ __align__(128) unsigned char smem[];
  T* const qs = reinterpret_cast<T*>(smem);
  T* const ks = qs + kTileElems<T, D>;      // two stages
  T* const vs = ks + 2 * kTileElems<T, D>;  // two stages

  const int tiles = (L + kTile - 1) / kTile;
  const int64_t b = blockIdx.x / tiles;
  const int q0 = static_cast<int>(blockIdx.x - b * tiles) * kTile;
  q += g.at(g.q, b);
  k += g.at(g.k, b);
  v += g.at(g.v, b);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gr = lane >> 2, t = lane & 3;
  const int row0 = q0 + warp * 16 + gr;  // and row0 + 8
  const float scale2 = scale * kLog2e;

  const int n_tiles = key_tiles(q0, L, S, causal);
  cp_tile<T, D>(qs, q, q0, L, g.q.r);
  cp_tile<T, D>(ks, k, 0, S, g.k.r);
  cp_tile<T, D>(vs, v, 0, S, g.v.r);
  cp_commit();
  float o[D / 8][4];
  zero<D>(o);
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  for (int j = 0; j < n_tiles; ++j) {
    const int stage = j & 1, c0 = j * kTile;
    if (j + 1 < n_tiles) {
      cp_tile<T, D>(ks + (stage ^ 1) * kTileElems<T, D>, k, c0 + kTile, S, g.k.r);
      cp_tile<T, D>(vs + (stage ^ 1) * kTileElems<T, D>, v, c0 + kTile, S, g.v.r);
    }
    cp_commit();
    cp_wait<1>();
    __syncthreads();
    float s[8][4];
    strip_nt<T, D>(s, qs, warp * 16, ks + stage * kTileElems<T, D>);
    const bool edge = c0 + kTile > S || (causal && c0 + kTile - 1 > q0 + warp * 16);
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int n = 0; n < 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[n][e] * scale2;
        if (edge) {
          const int col = c0 + n * 8 + 2 * t + (e & 1), row = row0 + (e >> 1) * 8;
          if (col >= S || (causal && col > row)) x = -INFINITY;
        }
        s[n][e] = x;
        mx[e >> 1] = fmaxf(mx[e >> 1], x);
      }
    }
    float alpha[2], base[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      base[h] = mx[h] == -INFINITY ? 0.0f : mx[h];  // nothing visible yet: p = 0
      alpha[h] = exp2f(m[h] - base[h]);
      m[h] = mx[h];
    }
#pragma unroll
    for (int n = 0; n < 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[n][e] = exp2f(s[n][e] - base[e >> 1]);
        sum[e >> 1] += s[n][e];
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      sum[h] += __shfl_xor_sync(0xffffffffu, sum[h], 1);
      sum[h] += __shfl_xor_sync(0xffffffffu, sum[h], 2);
      l[h] = l[h] * alpha[h] + sum[h];
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      o[n][0] *= alpha[0];
      o[n][1] *= alpha[0];
      o[n][2] *= alpha[1];
      o[n][3] *= alpha[1];
    }
    strip_nn<T, D>(o, s, vs + stage * kTileElems<T, D>);
    __syncthreads();  // this stage is refilled by the next iteration's prefetch
  }
  const float inv0 = l[0] > 0.0f ? 1.0f / l[0] : 0.0f, inv1 = l[1] > 0.0f ? 1.0f / l[1] : 0.0f;
  store_rows<T, D>(out + g.at(g.o, b), o, row0, L, g.o.r, inv0, inv1);
  if (t == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 8 * h;
      if (row < L) lse[g.at(g.stat, b) + row * g.stat.r] = l[h] > 0.0f ? (m[h] + log2f(l[h])) * kLn2 : -INFINITY;
    }
  }
}

// Moves a backward kernel's operand pointers to batch-head bh's slice.
template <typename P, typename F>
__device__ inline void to_slice(const Layout& g, int64_t bh, P& q, P& k, P& v, P& dout, F& lse, F& delta) {
  q += g.at(g.q, bh);
  k += g.at(g.k, bh);
  v += g.at(g.v, bh);
  dout += g.at(g.o, bh);
  lse += g.at(g.stat, bh);
  delta += g.at(g.stat, bh);
}

template <typename T, int D>
struct BwdKvSmem {
  static constexpr size_t bytes = 6 * sizeof(T) * kTileElems<T, D> + 4 * sizeof(float) * kTile;
};

// dK and dV: grid.x = batch * key tiles; each block walks the query tiles that see its keys.
// Warp w holds the transposed strips (its 16 keys x 64 queries) of P and dS, which are exactly
// the operands of dV += P^T dO and dK += dS^T Q. lse, delta (= rowsum(dO * O)) are (batch, L)
// float32; dk, dv (batch, S, D).
template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_backward_kv(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                      const T* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ delta,
                      T* __restrict__ dk, T* __restrict__ dv, const Layout g, float scale, bool causal) {
  const int L = g.L, S = g.S;
  extern __shared__ __align__(128) unsigned char smem[];
  T* const ks = reinterpret_cast<T*>(smem);
  T* const vs = ks + kTileElems<T, D>;
  T* const qs = vs + kTileElems<T, D>;                                        // two stages
  T* const dos = qs + 2 * kTileElems<T, D>;                                   // two stages
  float* const lse_s = reinterpret_cast<float*>(dos + 2 * kTileElems<T, D>);  // two stages, times log2(e)
  float* const delta_s = lse_s + 2 * kTile;                                   // two stages

  const int tiles = (S + kTile - 1) / kTile;
  const int64_t b = blockIdx.x / tiles;
  const int c0 = static_cast<int>(blockIdx.x - b * tiles) * kTile;
  to_slice(g, b, q, k, v, dout, lse, delta);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, t = lane & 3;
  const int key0 = c0 + warp * 16 + (lane >> 2);  // and key0 + 8
  const float scale2 = scale * kLog2e;

  // Rows of q, dout, lse and delta for the query tile at r0 into a stage; a row past L or
  // with nothing visible gets lse = +inf, so its probabilities come out 0.
  auto prefetch = [&](int stage, int r0) {
    cp_tile<T, D>(qs + stage * kTileElems<T, D>, q, r0, L, g.q.r);
    cp_tile<T, D>(dos + stage * kTileElems<T, D>, dout, r0, L, g.o.r);
    for (int i = threadIdx.x; i < kTile; i += kThreads) {
      const bool in = r0 + i < L;
      const float x = in ? lse[(r0 + i) * g.stat.r] : INFINITY;
      lse_s[stage * kTile + i] = x == -INFINITY ? INFINITY : x * kLog2e;
      delta_s[stage * kTile + i] = in ? delta[(r0 + i) * g.stat.r] : 0.0f;
    }
  };

  const int q_tiles = (L + kTile - 1) / kTile, first = causal ? c0 / kTile : 0;
  cp_tile<T, D>(ks, k, c0, S, g.k.r);
  cp_tile<T, D>(vs, v, c0, S, g.v.r);
  if (first < q_tiles) prefetch(0, first * kTile);
  cp_commit();
  float dk_acc[D / 8][4], dv_acc[D / 8][4];
  zero<D>(dk_acc);
  zero<D>(dv_acc);
  for (int i = first; i < q_tiles; ++i) {
    const int stage = (i - first) & 1, r0 = i * kTile;
    if (i + 1 < q_tiles) prefetch(stage ^ 1, r0 + kTile);
    cp_commit();
    cp_wait<1>();
    __syncthreads();
    const T* const qt = qs + stage * kTileElems<T, D>;
    const T* const dot = dos + stage * kTileElems<T, D>;
    const float* const ls = lse_s + stage * kTile;
    const float* const dl = delta_s + stage * kTile;
    float p[8][4], ds[8][4];
    strip_nt<T, D>(p, ks, warp * 16, qt);    // (k q^T) for this warp's keys
    strip_nt<T, D>(ds, vs, warp * 16, dot);  // (v dO^T) = dP^T
    const bool edge = causal && c0 + warp * 16 + 15 > r0;
#pragma unroll
    for (int n = 0; n < 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int qi = n * 8 + 2 * t + (e & 1);
        float pe = exp2f(p[n][e] * scale2 - ls[qi]);
        if (edge && key0 + (e >> 1) * 8 > r0 + qi) pe = 0.0f;
        p[n][e] = pe;
        ds[n][e] = pe * (ds[n][e] - dl[qi]) * scale;
      }
    }
    strip_nn<T, D>(dv_acc, p, dot);
    strip_nn<T, D>(dk_acc, ds, qt);
    __syncthreads();  // this stage is refilled by the next iteration's prefetch
  }
  store_rows<T, D>(dv + g.at(g.dv, b), dv_acc, key0, S, g.dv.r, 1.0f, 1.0f);
  store_rows<T, D>(dk + g.at(g.dk, b), dk_acc, key0, S, g.dk.r, 1.0f, 1.0f);
}

template <typename T, int D>
struct BwdQSmem {
  static constexpr size_t bytes = 6 * sizeof(T) * kTileElems<T, D>;
};

// dQ: grid.x = batch * query tiles; each block walks the key tiles its rows see.
template <typename T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_backward_q(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                     const T* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ delta,
                     T* __restrict__ dq, const Layout g, float scale, bool causal) {
  const int L = g.L, S = g.S;
  extern __shared__ __align__(128) unsigned char smem[];
  T* const qs = reinterpret_cast<T*>(smem);
  T* const dos = qs + kTileElems<T, D>;
  T* const ks = dos + kTileElems<T, D>;     // two stages
  T* const vs = ks + 2 * kTileElems<T, D>;  // two stages

  const int tiles = (L + kTile - 1) / kTile;
  const int64_t b = blockIdx.x / tiles;
  const int q0 = static_cast<int>(blockIdx.x - b * tiles) * kTile;
  to_slice(g, b, q, k, v, dout, lse, delta);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, t = lane & 3;
  const int row0 = q0 + warp * 16 + (lane >> 2);  // and row0 + 8
  const float scale2 = scale * kLog2e;
  float row_lse[2], row_delta[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + 8 * h;
    const float x = row < L ? lse[row * g.stat.r] : INFINITY;
    row_lse[h] = x == -INFINITY ? INFINITY : x * kLog2e;
    row_delta[h] = row < L ? delta[row * g.stat.r] : 0.0f;
  }

  const int n_tiles = key_tiles(q0, L, S, causal);
  cp_tile<T, D>(qs, q, q0, L, g.q.r);
  cp_tile<T, D>(dos, dout, q0, L, g.o.r);
  cp_tile<T, D>(ks, k, 0, S, g.k.r);
  cp_tile<T, D>(vs, v, 0, S, g.v.r);
  cp_commit();
  float dq_acc[D / 8][4];
  zero<D>(dq_acc);
  for (int j = 0; j < n_tiles; ++j) {
    const int stage = j & 1, c0 = j * kTile;
    if (j + 1 < n_tiles) {
      cp_tile<T, D>(ks + (stage ^ 1) * kTileElems<T, D>, k, c0 + kTile, S, g.k.r);
      cp_tile<T, D>(vs + (stage ^ 1) * kTileElems<T, D>, v, c0 + kTile, S, g.v.r);
    }
    cp_commit();
    cp_wait<1>();
    __syncthreads();
    const T* const kt = ks + stage * kTileElems<T, D>;
    float p[8][4], ds[8][4];
    strip_nt<T, D>(p, qs, warp * 16, kt);
    strip_nt<T, D>(ds, dos, warp * 16, vs + stage * kTileElems<T, D>);
    const bool edge = c0 + kTile > S || (causal && c0 + kTile - 1 > q0 + warp * 16);
#pragma unroll
    for (int n = 0; n < 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int h = e >> 1;
        float pe = exp2f(p[n][e] * scale2 - row_lse[h]);
        if (edge) {
          const int col = c0 + n * 8 + 2 * t + (e & 1);
          if (col >= S || (causal && col > row0 + 8 * h)) pe = 0.0f;
        }
        ds[n][e] = pe * (ds[n][e] - row_delta[h]) * scale;
      }
    }
    strip_nn<T, D>(dq_acc, ds, kt);
    __syncthreads();  // this stage is refilled by the next iteration's prefetch
  }
  store_rows<T, D>(dq + g.at(g.dq, b), dq_acc, row0, L, g.dq.r, 1.0f, 1.0f);
}

// ---- launchers (raw device pointers; all on `stream`) ----

template <typename K>
inline cudaError_t allow_smem(K kernel, size_t bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

template <typename T, int D>
cudaError_t forward(const T* q, const T* k, const T* v, T* out, float* lse, int64_t batch, const Layout& g, float scale,
                    bool causal, cudaStream_t stream) {
  constexpr size_t bytes = FwdSmem<T, D>::bytes;
  static const cudaError_t ready = allow_smem(flash_forward<T, D>, bytes);
  if (ready != cudaSuccess) return ready;
  const int64_t blocks = batch * ((g.L + kTile - 1) / kTile);
  flash_forward<T, D><<<static_cast<unsigned>(blocks), kThreads, bytes, stream>>>(q, k, v, out, lse, g, scale, causal);
  return cudaGetLastError();
}

template <typename T, int D>
cudaError_t backward(const T* q, const T* k, const T* v, const T* dout, const float* lse, const float* delta, T* dq,
                     T* dk, T* dv, int64_t batch, const Layout& g, float scale, bool causal, cudaStream_t stream) {
  constexpr size_t kv_bytes = BwdKvSmem<T, D>::bytes, q_bytes = BwdQSmem<T, D>::bytes;
  static const cudaError_t ready_kv = allow_smem(flash_backward_kv<T, D>, kv_bytes);
  static const cudaError_t ready_q = allow_smem(flash_backward_q<T, D>, q_bytes);
  if (ready_kv != cudaSuccess) return ready_kv;
  if (ready_q != cudaSuccess) return ready_q;
  const int64_t kv_blocks = batch * ((g.S + kTile - 1) / kTile), q_blocks = batch * ((g.L + kTile - 1) / kTile);
  flash_backward_kv<T, D><<<static_cast<unsigned>(kv_blocks), kThreads, kv_bytes, stream>>>(q, k, v, dout, lse, delta,
                                                                                            dk, dv, g, scale, causal);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  flash_backward_q<T, D>
      <<<static_cast<unsigned>(q_blocks), kThreads, q_bytes, stream>>>(q, k, v, dout, lse, delta, dq, g, scale, causal);
  return cudaGetLastError();
}

}  // namespace st::backend::cuda::flash
