// Fused row-wise cross-entropy (src/nn/loss_classification.cpp's index-target path): one block per
// row computes the row's log-sum-exp and loss in one pass over it; the backward writes softmax -
// onehot scaled by the row's gradient in one pass. Nothing of size (rows, C) is kept but the
// logits themselves. Asked for the gradient with the loss (linear_cross_entropy's chunks), a block
// holds its row in registers and writes the gradient from there: one read of the logits instead
// of two. All read the row in 16-byte vectors (the rows are bandwidth-bound: 16384 x 50304 bf16
// logits are 1.6 GB); the pass that read it twice with 2-byte loads took 2.6 ms forward on an H100.
#include <algorithm>
#include <climits>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

namespace {

constexpr int kRowThreads = 256;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread

// exp for the accumulation type: float's hardware ex2 path (2 ulp; the arguments here are <= 0, where
// the result is in [0, 1] and the sum's rounding dominates), double's libm exp.
__device__ inline float acc_exp(float x) { return __expf(x); }
__device__ inline double acc_exp(double x) { return exp(x); }

// A row of n elements at p, as a scalar head up to p's first 16-byte boundary, nvec 16-byte
// vectors and a scalar tail. `vectors` false (a companion pointer aligned differently) puts the
// whole row in the head.
template <typename T>
struct RowSplit {
  static constexpr int V = vec_width<T>();
  int64_t head, nvec;
  __device__ RowSplit(const T* p, int64_t n, bool vectors) {
    const auto misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(p) % 16);
    head = vectors ? min(n, (16 - misaligned) % 16 / static_cast<int64_t>(sizeof(T))) : n;
    nvec = (n - head) / V;
  }
  __device__ int64_t tail() const { return head + nvec * V; }
};

// Calls f(j0, vals, count) over a block's share of row xr in 16-byte vectors (count = V) and
// single elements (count = 1), the values converted to A; every element is visited once.
template <typename A, typename T, typename F>
__device__ inline void for_row_chunks(const T* xr, int64_t cols, const RowSplit<T>& rs, F f) {
  constexpr int V = RowSplit<T>::V;
  const int64_t step = blockDim.x;
  A one[1];
  for (int64_t j = threadIdx.x; j < rs.head; j += step) {
    one[0] = convert<A>(xr[j]);
    f(j, one, 1);
  }
  const auto* xv = reinterpret_cast<const Pack<T, V>*>(xr + rs.head);
  int64_t i = threadIdx.x;
  for (; i + (kUnroll - 1) * step < rs.nvec; i += kUnroll * step) {
    Pack<T, V> p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) p[u] = xv[i + u * step];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      A v[V];
#pragma unroll
      for (int e = 0; e < V; ++e) v[e] = convert<A>(p[u].v[e]);
      f(rs.head + (i + u * step) * V, v, V);
    }
  }
  for (; i < rs.nvec; i += step) {
    const Pack<T, V> p = xv[i];
    A v[V];
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = convert<A>(p.v[e]);
    f(rs.head + i * V, v, V);
  }
  for (int64_t j = rs.tail() + threadIdx.x; j < cols; j += step) {
    one[0] = convert<A>(xr[j]);
    f(j, one, 1);
  }
}

// One pass over the row: each thread keeps a running maximum and the sum of exp(x - maximum),
// rescaled when the maximum grows (the online softmax); the block then combines the pairs.
template <typename T, typename A>
__global__ void cross_entropy_kernel(const T* x, const int64_t* t, A* loss, A* lse, int64_t cols, int64_t ignore_index,
                                     A scale) {
  const int64_t r = blockIdx.x;
  const T* xr = x + r * cols;
  A m = -INFINITY, s = 0;
  for_row_chunks<A>(xr, cols, RowSplit<T>(xr, cols, true), [&](int64_t, const A* v, int count) {
    A cm = v[0];
    for (int e = 1; e < count; ++e) cm = fmax(cm, v[e]);
    if (cm > m) {            // NaN never compares greater: it reaches s through its exp below
      s *= acc_exp(m - cm);  // m = -inf: exp(-inf) = 0
      m = cm;
    }
    const A shift = m == -INFINITY ? A(0) : m;  // nothing finite yet: every exp is 0
    for (int e = 0; e < count; ++e) s += acc_exp(v[e] - shift);
  });
  const A row_max = block_reduce(m, [](A a, A b) { return a > b ? a : b; }, A(-INFINITY));
  const A shift = row_max == -INFINITY ? A(0) : row_max;  // all -inf: lse = -inf
  // a thread whose maximum is below the row's rescales to it (inf - inf would give NaN, and such a
  // row's sum is NaN through its own exp already)
  s = block_reduce(m == shift || s == A(0) ? s : s * acc_exp(m - shift), [](A a, A b) { return a + b; }, A(0));
  if (threadIdx.x == 0) {
    const A l = shift + log(s);
    const int64_t y = t[r];
    lse[r] = l;
    // a target out of range (the op layer checks, unless the host copy's range vouched for it)
    // gives NaN, never a read past the row
    loss[r] = y == ignore_index ? A(0) : y < 0 || y >= cols ? A(NAN) : scale * (l - convert<A>(xr[y]));
  }
}

template <typename T, typename A>
__global__ void cross_entropy_backward_kernel(const T* x, const int64_t* t, const A* lse, const A* g, T* dx,
                                              int64_t cols, int64_t ignore_index, int64_t g_stride, A scale) {
  constexpr int V = RowSplit<T>::V;
  const int64_t r = blockIdx.x;
  const int64_t y = t[r];
  const A gr = y == ignore_index ? A(0) : g ? scale * g[r * g_stride] : scale, l = lse[r];
  const T* xr = x + r * cols;
  T* dr = dx + r * cols;
  // vectors where x's and dx's rows share their alignment (always, for two contiguous tensors)
  const bool same = (reinterpret_cast<uintptr_t>(xr) - reinterpret_cast<uintptr_t>(dr)) % 16 == 0;
  for_row_chunks<A>(xr, cols, RowSplit<T>(xr, cols, same), [&](int64_t j0, const A* v, int count) {
    Pack<T, V> out;
    for (int e = 0; e < count; ++e) out.v[e] = convert<T>(gr * (acc_exp(v[e] - l) - (j0 + e == y ? A(1) : A(0))));
    if (count == V) {
      *reinterpret_cast<Pack<T, V>*>(dr + j0) = out;
    } else {
      dr[j0] = out.v[0];
    }
  });
}

// Makes a 16-byte vector's registers opaque to the optimiser (an empty asm that "changes" them).
template <typename P>
__device__ inline void opaque(P& p) {
  static_assert(sizeof(P) == 16);
  auto* w = reinterpret_cast<unsigned*>(&p);
#pragma unroll
  for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(w[i]));
}

// 16-byte vectors a thread of cross_entropy_held_kernel holds: 10 (GPT-2's 50304 bfloat16 classes
// take 640 threads: 629 rounded up to whole warps), 4 for float64, whose exponentials take twice the registers.
template <typename T>
constexpr int held_vectors() {
  return sizeof(T) >= 8 ? 4 : 10;
}
constexpr int kHeldThreads = 768;  // 85 registers a thread

// The loss, log-sum-exp and gradient of a row in one read: the block's threads hold the row's
// 16-byte vectors (thread i the vectors i, i + blockDim.x, ...) and its fewer than V leading and
// trailing elements in registers, take the maximum, then the sum of exponentials, and write
// scale (softmax - onehot) from what they hold. x's and dx's rows share their alignment.

template <typename T, typename A>
__global__ void __launch_bounds__(kHeldThreads)
    cross_entropy_held_kernel(const T* x, const int64_t* t, A* loss, A* lse, T* dx, int64_t cols, int64_t ignore_index,
                              A scale) {
  constexpr int V = RowSplit<T>::V, kHeld = held_vectors<T>();
  const int64_t r = blockIdx.x;
  const T* xr = x + r * cols;
  T* dr = dx + r * cols;
  const RowSplit<T> rs(xr, cols, true);
  const int head_n = static_cast<int>(rs.head), nvec = static_cast<int>(rs.nvec), tail = static_cast<int>(rs.tail());
  const int64_t y = t[r];
  const bool ignored = y == ignore_index, in_range = y >= 0 && y < cols;
  const int target_col = in_range ? static_cast<int>(y) : -1;
  const auto* xv = reinterpret_cast<const Pack<T, V>*>(xr + rs.head);
  Pack<T, V> held[kHeld];
#pragma unroll
  for (int k = 0; k < kHeld; ++k) {
    const int i = threadIdx.x + k * blockDim.x;
    if (i < nvec) held[k] = xv[i];
  }
  const int j0 = threadIdx.x;
  const bool has_head = j0 < head_n, has_tail = tail + j0 < cols;
  const A head = has_head ? convert<A>(xr[j0]) : A(0);
  const A tail_v = has_tail ? convert<A>(xr[tail + j0]) : A(0);
  const A target = threadIdx.x == 0 && in_range ? convert<A>(xr[y]) : A(0);
  // f(j, v) for every element this thread holds (j its column). Each pass converts the held vectors
  // afresh: the empty asm hides them from the compiler, which would otherwise keep a pass's
  // converted floats for the next one (twice the registers, spilled).
  const auto for_held = [&](auto f) {
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      const int i = threadIdx.x + k * blockDim.x;
      if (i >= nvec) break;
      opaque(held[k]);
#pragma unroll
      for (int e = 0; e < V; ++e) f(head_n + i * V + e, convert<A>(held[k].v[e]));
    }
    if (has_head) f(j0, head);
    if (has_tail) f(tail + j0, tail_v);
  };
  A m = -INFINITY;
  for_held([&](int, A v) { m = fmax(m, v); });  // fmax skips NaN: it reaches s through its exp
  const A row_max = block_reduce(m, [](A a, A b) { return fmax(a, b); }, A(-INFINITY));
  const A shift = row_max == -INFINITY ? A(0) : row_max;  // all -inf: lse = -inf
  A s = 0;
  for_held([&](int, A v) { s += acc_exp(v - shift); });
  const A l = shift + log(block_reduce(s, [](A a, A b) { return a + b; }, A(0)));
  if (threadIdx.x == 0) {
    lse[r] = l;
    loss[r] = ignored ? A(0) : !in_range ? A(NAN) : scale * (l - target);
  }
  const A gr = ignored ? A(0) : scale;
  const auto grad = [&](int j, A v) { return convert<T>(gr * (acc_exp(v - l) - (j == target_col ? A(1) : A(0)))); };
  auto* dv = reinterpret_cast<Pack<T, V>*>(dr + rs.head);
#pragma unroll
  for (int k = 0; k < kHeld; ++k) {
    const int i = threadIdx.x + k * blockDim.x;
    if (i >= nvec) break;
    opaque(held[k]);
    Pack<T, V> out;
#pragma unroll
    for (int e = 0; e < V; ++e) out.v[e] = grad(head_n + i * V + e, convert<A>(held[k].v[e]));
    dv[i] = out;
  }
  if (has_head) dr[j0] = grad(j0, head);
  if (has_tail) dr[tail + j0] = grad(tail + j0, tail_v);
}

// Threads per block for cross_entropy_held_kernel over rows of `cols` elements, or 0 where a row
// does not fit the block's registers or dx is aligned unlike x (its rows' vectors would not line up).
template <typename T>
unsigned held_threads(const T* x, const T* dx, int64_t cols) {
  constexpr int V = vec_width<T>();
  const auto align = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16; };
  if (align(x) != align(dx)) return 0;
  const int64_t per_thread = int64_t{held_vectors<T>()} * V, needed = (cols + per_thread - 1) / per_thread;
  if (needed > kHeldThreads) return 0;
  return static_cast<unsigned>(std::max<int64_t>(128, (needed + 31) / 32 * 32));
}

void check_rows(int64_t rows, const char* op) {
  if (rows > INT_MAX) {
    throw ValueError(std::string(op) + ": " + std::to_string(rows) + " rows exceed the kernel's grid");
  }
}

}  // namespace

void cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss, Tensor& lse,
                        Tensor& dx) {
  const int64_t rows = x.size(0), cols = x.size(1);
  if (rows == 0) return;
  check_rows(rows, "cross_entropy");
  dispatch_float_accum(x.dtype(), [&](auto tag, auto acc) {
    using T = decltype(tag);
    using A = decltype(acc);
    const auto* xp = static_cast<const T*>(x.raw_data());
    T* dp = dx.defined() ? static_cast<T*>(dx.raw_data()) : nullptr;
    if (const unsigned threads = dp ? held_threads(xp, dp, cols) : 0) {
      cross_entropy_held_kernel<T, A><<<static_cast<unsigned>(rows), threads, 0, stream()>>>(
          xp, t.data<int64_t>(), loss.data<A>(), lse.data<A>(), dp, cols, ignore_index, static_cast<A>(scale));
      ST_CUDA_LAUNCH_CHECK();
      return;
    }
    cross_entropy_kernel<T, A><<<static_cast<unsigned>(rows), kRowThreads, 0, stream()>>>(
        xp, t.data<int64_t>(), loss.data<A>(), lse.data<A>(), cols, ignore_index, static_cast<A>(scale));
    ST_CUDA_LAUNCH_CHECK();
    if (!dp) return;
    // a row too long for the registers (or dx aligned unlike x): the backward's pass, g = 1
    cross_entropy_backward_kernel<T, A><<<static_cast<unsigned>(rows), kRowThreads, 0, stream()>>>(
        xp, t.data<int64_t>(), lse.data<A>(), nullptr, dp, cols, ignore_index, 0, static_cast<A>(scale));
    ST_CUDA_LAUNCH_CHECK();
  });
}

void cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                 int64_t ignore_index, double scale, Tensor& dx) {
  const int64_t rows = x.size(0), cols = x.size(1);
  if (rows == 0) return;
  check_rows(rows, "cross_entropy backward");
  dispatch_float_accum(x.dtype(), [&](auto tag, auto acc) {
    using T = decltype(tag);
    using A = decltype(acc);
    cross_entropy_backward_kernel<T, A><<<static_cast<unsigned>(rows), kRowThreads, 0, stream()>>>(
        static_cast<const T*>(x.raw_data()), t.data<int64_t>(), lse.data<A>(), g.data<A>(),
        static_cast<T*>(dx.raw_data()), cols, ignore_index, g.numel() == 1 ? 0 : 1, static_cast<A>(scale));
    ST_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace st::backend::cuda
