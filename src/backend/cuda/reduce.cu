// Reductions, arg-reductions and softmax (layer norm: layer_norm.cu).
#include <cmath>
#include <limits>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/row_regs.cuh"

namespace st::backend::cuda {

using backend::ReduceOp;

namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename A>
struct Red {
  ReduceOp op;
  __host__ __device__ A init() const {
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Any:
        return A(0);
      case ReduceOp::Prod:
      case ReduceOp::All:
        return A(1);
      case ReduceOp::Max:
        if constexpr (std::is_floating_point_v<A>)
          return -INFINITY;
        else
          return std::numeric_limits<A>::lowest();
      case ReduceOp::Min:
        if constexpr (std::is_floating_point_v<A>)
          return INFINITY;
        else
          return std::numeric_limits<A>::max();
    }
    return A(0);
  }
  __device__ A operator()(A a, A b) const {
    switch (op) {
      case ReduceOp::Sum:
        return a + b;
      case ReduceOp::Prod:
        return a * b;
      case ReduceOp::Max:
        if constexpr (std::is_floating_point_v<A>) {
          if (a != a || b != b) return NAN;
        }
        return a > b ? a : b;
      case ReduceOp::Min:
        if constexpr (std::is_floating_point_v<A>) {
          if (a != a || b != b) return NAN;
        }
        return a < b ? a : b;
      case ReduceOp::Any:
        return (a != 0) || (b != 0);
      case ReduceOp::All:
        return (a != 0) && (b != 0);
    }
    return a;
  }
};

// Integer extrema start from the input type's range, not the accumulator's.
template <typename T, typename A>
A init_for(const Red<A>& r) {
  if constexpr (!std::is_floating_point_v<T>) {
    if (r.op == ReduceOp::Max) return static_cast<A>(std::numeric_limits<T>::lowest());
    if (r.op == ReduceOp::Min) return static_cast<A>(std::numeric_limits<T>::max());
  }
  return r.init();
}

// inner == 1: block (split, o) reduces x[o*r + chunk] into out[o*nsplit + split].
template <typename In, typename A, typename Out>
__global__ void row_reduce_kernel(const In* x, Out* out, int64_t outer, int64_t r, int64_t chunk, Red<A> red, A init) {
  const int64_t nsplit = gridDim.x;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    const int64_t b = blockIdx.x * chunk, e = min(r, b + chunk);
    const In* row = x + o * r;
    A acc = init, acc2 = init;
    int64_t tail = b;
    constexpr int V = vec_width<In>();
    if constexpr (V > 1) {
      // Scalar head up to a 16-byte boundary, then two independent 16-byte loads per step.
      const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(row + b) / sizeof(In)) % V;
      const int64_t head = min(e - b, mis ? V - mis : int64_t{0});
      if (threadIdx.x < head) acc = red(acc, static_cast<A>(row[b + threadIdx.x]));
      const int64_t nvec = (e - b - head) / V;
      const auto* pv = reinterpret_cast<const Pack<In, V>*>(row + b + head);
      int64_t k = threadIdx.x;
      for (; k + blockDim.x < nvec; k += 2 * static_cast<int64_t>(blockDim.x)) {
        const Pack<In, V> p0 = pv[k], p1 = pv[k + blockDim.x];
#pragma unroll
        for (int q = 0; q < V; ++q) {
          acc = red(acc, static_cast<A>(p0.v[q]));
          acc2 = red(acc2, static_cast<A>(p1.v[q]));
        }
      }
      if (k < nvec) {
        const Pack<In, V> p0 = pv[k];
#pragma unroll
        for (int q = 0; q < V; ++q) acc = red(acc, static_cast<A>(p0.v[q]));
      }
      tail = b + head + nvec * V;
    }
    for (int64_t i = tail + threadIdx.x; i < e; i += blockDim.x) acc = red(acc, static_cast<A>(row[i]));
    acc = block_reduce(red(acc, acc2), red, init);
    if (threadIdx.x == 0) out[o * nsplit + blockIdx.x] = static_cast<Out>(acc);
  }
}

// inner == 1 with short rows and many of them: one warp per row, no block barriers.
template <typename In, typename A, typename Out>
__global__ void warp_row_reduce_kernel(const In* x, Out* out, int64_t outer, int64_t r, Red<A> red, A init) {
  const int lane = threadIdx.x & 31;
  const int64_t per_block = blockDim.x >> 5;
  for (int64_t o = blockIdx.x * per_block + (threadIdx.x >> 5); o < outer; o += gridDim.x * per_block) {
    const In* row = x + o * r;
    A acc = init, acc2 = init;
    int64_t i = lane;
    for (; i + 32 < r; i += 64) {
      acc = red(acc, static_cast<A>(row[i]));
      acc2 = red(acc2, static_cast<A>(row[i + 32]));
    }
    if (i < r) acc = red(acc, static_cast<A>(row[i]));
    acc = warp_reduce(red(acc, acc2), red);
    if (lane == 0) out[o] = static_cast<Out>(acc);
  }
}

// inner > 1: thread (j) of block (jx, o, split) reduces x[o, chunk, j] into out[(o*nsplit + split)*inner + j].
template <typename In, typename A, typename Out>
__global__ void col_reduce_kernel(const In* x, Out* out, int64_t outer, int64_t r, int64_t inner, int64_t chunk,
                                  Red<A> red, A init) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= inner) return;
  const int64_t nsplit = gridDim.z;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    const int64_t b = blockIdx.z * chunk, e = min(r, b + chunk);
    A acc = init;
    const In* base = x + o * r * inner + j;
    for (int64_t k = b; k < e; ++k) acc = red(acc, static_cast<A>(base[k * inner]));
    out[(o * nsplit + blockIdx.z) * inner + j] = static_cast<Out>(acc);
  }
}

template <typename In, typename A, typename Out>
void reduce_pass(const In* x, Out* out, int64_t outer, int64_t r, int64_t inner, int64_t nsplit, Red<A> red, A init) {
  const int64_t chunk = (r + nsplit - 1) / nsplit;
  const unsigned gy = static_cast<unsigned>(std::min<int64_t>(outer, 65535));
  if (inner == 1) {
    const int threads = r / nsplit >= 1024 ? 512 : (r / nsplit >= 256 ? 256 : 128);
    row_reduce_kernel<In, A, Out>
        <<<dim3(static_cast<unsigned>(nsplit), gy), threads, 0, stream()>>>(x, out, outer, r, chunk, red, init);
  } else {
    const int threads = inner >= 256 ? 256 : (inner >= 64 ? 64 : 32);
    const unsigned gx = static_cast<unsigned>((inner + threads - 1) / threads);
    col_reduce_kernel<In, A, Out><<<dim3(gx, gy, static_cast<unsigned>(nsplit)), threads, 0, stream()>>>(
        x, out, outer, r, inner, chunk, red, init);
  }
  ST_CUDA_LAUNCH_CHECK();
}

template <typename T>
void reduce_typed(ReduceOp op, const Tensor& xt, int64_t outer, int64_t r, int64_t inner, Tensor& outt) {
  using A = acc_t<T>;
  const Red<A> red{op};
  const A init = init_for<T, A>(red);
  const T* x = static_cast<const T*>(xt.raw_data());
  T* out = static_cast<T*>(outt.raw_data());
  if (outer * inner == 0) return;
  if (r == 0) {
    for_n(outer * inner, [=] __device__(int64_t i) { out[i] = static_cast<T>(init); });
    return;
  }
  // Split long reductions over more blocks when there are too few outputs to fill the chip.
  const int64_t target = int64_t{4} * sm_count() * (inner == 1 ? 1 : 256);
  const int64_t have = inner == 1 ? outer : outer * inner;
  int64_t nsplit = 1;
  if (have < target) {
    nsplit = std::min<int64_t>((target + have - 1) / have, std::max<int64_t>(1, r / (inner == 1 ? 2048 : 16)));
    nsplit = std::max<int64_t>(1, std::min<int64_t>(nsplit, 65535));
  }
  if (nsplit == 1 && inner == 1 && r <= 2048) {
    const int64_t blocks = std::min<int64_t>((outer + 7) / 8, int64_t{65535} * 16);
    warp_row_reduce_kernel<T, A, T><<<static_cast<unsigned>(blocks), 256, 0, stream()>>>(x, out, outer, r, red, init);
    ST_CUDA_LAUNCH_CHECK();
    return;
  }
  if (nsplit == 1) {
    reduce_pass<T, A, T>(x, out, outer, r, inner, 1, red, init);
    return;
  }
  Tensor partial =
      Tensor::empty({outer * nsplit * inner}, std::is_floating_point_v<T> ? Dtype::Float64 : Dtype::Int64, xt.device());
  A* p = static_cast<A*>(partial.raw_data());
  reduce_pass<T, A, A>(x, p, outer, r, inner, nsplit, red, init);
  reduce_pass<A, A, T>(p, out, outer, nsplit, inner, 1, red, init);
}

template <typename T>
struct ArgBest {
  T v;
  int64_t i;
};
template <typename T>
__device__ inline ArgBest<T> arg_pick(ArgBest<T> a, ArgBest<T> b, bool is_max) {
  if (a.i < 0) return b;
  if (b.i < 0) return a;
  if constexpr (std::is_floating_point_v<T>) {
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) {
      if (an && bn) return a.i < b.i ? a : b;
      return an ? a : b;
    }
  }
  if (a.v == b.v) return a.i < b.i ? a : b;
  return (is_max ? a.v > b.v : a.v < b.v) ? a : b;
}

template <typename T>
__global__ void arg_row_kernel(const T* x, T* values, int64_t* indices, int64_t outer, int64_t r, bool is_max) {
  __shared__ T sv[32];
  __shared__ int64_t si[32];
  for (int64_t o = blockIdx.x; o < outer; o += gridDim.x) {
    const T* row = x + o * r;
    ArgBest<T> best{T(0), -1};
    for (int64_t k = threadIdx.x; k < r; k += blockDim.x) best = arg_pick(best, ArgBest<T>{row[k], k}, is_max);
    for (int off = 16; off > 0; off >>= 1) {
      ArgBest<T> other{static_cast<T>(__shfl_xor_sync(0xffffffffu, best.v, off)),
                       __shfl_xor_sync(0xffffffffu, best.i, off)};
      best = arg_pick(best, other, is_max);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) {
      sv[warp] = best.v;
      si[warp] = best.i;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      ArgBest<T> b{sv[0], si[0]};
      for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w) b = arg_pick(b, ArgBest<T>{sv[w], si[w]}, is_max);
      values[o] = b.v;
      indices[o] = b.i;
    }
  }
}

template <typename T>
void arg_typed(bool is_max, const Tensor& xt, int64_t outer, int64_t r, int64_t inner, Tensor& vt, Tensor& it) {
  const T* x = static_cast<const T*>(xt.raw_data());
  T* values = static_cast<T*>(vt.raw_data());
  int64_t* indices = static_cast<int64_t*>(it.raw_data());
  if (outer * inner == 0 || r == 0) return;
  if (inner == 1 && r >= 64) {
    arg_row_kernel<T><<<static_cast<unsigned>(std::min<int64_t>(outer, 65535)), 256, 0, stream()>>>(x, values, indices,
                                                                                                    outer, r, is_max);
    ST_CUDA_LAUNCH_CHECK();
    return;
  }
  for_n(outer * inner, [=] __device__(int64_t oi) {
    const int64_t o = oi / inner, j = oi % inner;
    const T* base = x + o * r * inner + j;
    ArgBest<T> best{base[0], 0};
    for (int64_t k = 1; k < r; ++k) best = arg_pick(best, ArgBest<T>{base[k * inner], k}, is_max);
    values[oi] = best.v;
    indices[oi] = best.i;
  });
}

// ---- softmax: one block per row, online max/sum then one write pass ----
struct MaxSum {
  float m, s;
};
template <typename T>
__device__ inline void ms_combine(T& m, T& s, T m2, T s2) {
  const T mm = m > m2 ? m : m2;
  if (mm == -INFINITY) {
    s = s + s2;
    m = mm;
    return;
  }
  s = s * exp(m - mm) + s2 * exp(m2 - mm);
  m = mm;
}

template <typename T>
__global__ void softmax_kernel(const T* x, T* y, int64_t rows, int64_t cols, bool log) {
  __shared__ T sm[32], ss[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    T m = -INFINITY, s = 0;
    bool nan = false;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const T v = xr[j];
      if (v != v)
        nan = true;
      else if (v > m) {
        s = (m == -INFINITY ? T(0) : s * exp(m - v)) + T(1);
        m = v;
      } else if (v != -INFINITY) {  // exp(-inf - -inf) would be NaN while m is still -inf
        s += exp(v - m);
      }
    }
    for (int off = 16; off > 0; off >>= 1) {
      const T m2 = __shfl_xor_sync(0xffffffffu, m, off), s2 = __shfl_xor_sync(0xffffffffu, s, off);
      ms_combine(m, s, m2, s2);
    }
    nan = __syncthreads_or(nan);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
      sm[warp] = m;
      ss[warp] = s;
    }
    __syncthreads();
    if (warp == 0) {
      const int nw = blockDim.x >> 5;
      T m1 = lane < nw ? sm[lane] : T(-INFINITY), s1 = lane < nw ? ss[lane] : T(0);
      for (int off = 16; off > 0; off >>= 1) {
        const T m2 = __shfl_xor_sync(0xffffffffu, m1, off), s2 = __shfl_xor_sync(0xffffffffu, s1, off);
        ms_combine(m1, s1, m2, s2);
      }
      if (lane == 0) {
        sm[0] = m1;
        ss[0] = s1;
      }
    }
    __syncthreads();
    T mx = sm[0], sum = ss[0];
    __syncthreads();
    if (nan) {
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = NAN;
      continue;
    }
    if (!isfinite(mx)) {
      // Rows of -inf or with +inf: shift by 0, the CPU's rule.
      const T shift = T(0);
      sum = 0;
      // recompute the sum with the shift (rare path)
      T part = 0;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) part += exp(xr[j] - shift);
      part = block_reduce(part, [] __device__(T a, T b) { return a + b; }, T(0));
      sum = part;
      mx = shift;
    }
    if (log) {
      const T lse = mx + ::log(sum);
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = xr[j] - lse;
    } else {
      const T inv = T(1) / sum;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = exp(xr[j] - mx) * inv;
    }
  }
}

template <typename T, int VEC>
__global__ void softmax_regs_kernel(const T* x, T* y, int64_t rows, int64_t cols, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    RowRegs<T, VEC> row;
    row.load(x + r * cols, cols, T(-INFINITY));
    T m = -INFINITY;
    bool nan = false;
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) {
        const T v = row.v[it][q];
        nan |= v != v;
        m = v > m ? v : m;
      }
    nan = __syncthreads_or(nan);
    m = block_reduce(m, MaxOp<T>{}, T(-INFINITY));
    // A row whose max is infinite is shifted by 0 (the CPU's rule), any other by its max.
    const T shift = isfinite(m) ? m : T(0);
    T s = 0;
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) {
        const T e = exp(row.v[it][q] - shift);
        if (RowRegs<T, VEC>::valid(it, cols)) s += e;
        if (!log) row.v[it][q] = e;
      }
    s = block_reduce(s, AddOp<T>{}, T(0));
    const T lse = shift + ::log(s), inv = T(1) / s;
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) {
        T& v = row.v[it][q];
        v = nan ? T(NAN) : (log ? v - lse : v * inv);
      }
    row.store(y + r * cols, cols);
  }
}

// Softmax backward from the output: y * (g - sum(g * y)), or g - exp(y) * sum(g) for log.
template <typename T, int VEC>
__global__ void softmax_backward_regs_kernel(const T* g, const T* y, T* dx, int64_t rows, int64_t cols, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    RowRegs<T, VEC> gr, yr;
    gr.load(g + r * cols, cols, T(0));
    yr.load(y + r * cols, cols, T(0));
    T s = 0;
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) s += log ? gr.v[it][q] : gr.v[it][q] * yr.v[it][q];
    s = block_reduce(s, AddOp<T>{}, T(0));
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) {
        const T gv = gr.v[it][q], yv = yr.v[it][q];
        gr.v[it][q] = log ? gv - exp(yv) * s : yv * (gv - s);
      }
    gr.store(dx + r * cols, cols);
  }
}
template <typename T>
__global__ void softmax_backward_kernel(const T* g, const T* y, T* dx, int64_t rows, int64_t cols, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* gr = g + r * cols;
    const T* yr = y + r * cols;
    T s = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += log ? gr[j] : gr[j] * yr[j];
    s = block_reduce(s, AddOp<T>{}, T(0));
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      dx[r * cols + j] = log ? gr[j] - exp(yr[j]) * s : yr[j] * (gr[j] - s);
    }
  }
}

// Threads per row for the register kernels, or 0 when the row does not fit (or is not
// vector-aligned) and the streaming kernels run instead.
}  // namespace

void reduce(ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out) {
  switch (x.dtype()) {
    case Dtype::Bool:
      return reduce_typed<bool>(op, x, outer, r, inner, out);
    case Dtype::UInt8:
      return reduce_typed<uint8_t>(op, x, outer, r, inner, out);
    case Dtype::Int32:
      return reduce_typed<int32_t>(op, x, outer, r, inner, out);
    case Dtype::Int64:
      return reduce_typed<int64_t>(op, x, outer, r, inner, out);
    case Dtype::Float32:
      return reduce_typed<float>(op, x, outer, r, inner, out);
    case Dtype::Float64:
      return reduce_typed<double>(op, x, outer, r, inner, out);
    default:
      throw DtypeError(std::string("reduce kernel: unsupported dtype ") + dtype_name(x.dtype()));
  }
}

void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,
                Tensor& indices) {
  switch (x.dtype()) {
    case Dtype::Bool:
      return arg_typed<bool>(is_max, x, outer, r, inner, values, indices);
    case Dtype::UInt8:
      return arg_typed<uint8_t>(is_max, x, outer, r, inner, values, indices);
    case Dtype::Int32:
      return arg_typed<int32_t>(is_max, x, outer, r, inner, values, indices);
    case Dtype::Int64:
      return arg_typed<int64_t>(is_max, x, outer, r, inner, values, indices);
    case Dtype::Float32:
      return arg_typed<float>(is_max, x, outer, r, inner, values, indices);
    case Dtype::Float64:
      return arg_typed<double>(is_max, x, outer, r, inner, values, indices);
    default:
      throw DtypeError(std::string("arg_reduce kernel: unsupported dtype ") + dtype_name(x.dtype()));
  }
}

void softmax(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out) {
  if (rows == 0 || cols == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(rows, 65535 * 16));
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    const T* xp = x.data<T>();
    T* yp = out.data<T>();
    // Row starts stay aligned only when every row length keeps them so.
    const int rt = regs_threads<T>(cols, {xp, yp});
    if (rt > 0) {
      softmax_regs_kernel<T, vec_width<T>()><<<blocks, rt, 0, stream()>>>(xp, yp, rows, cols, log);
    } else {
      softmax_kernel<T><<<blocks, row_threads(cols), 0, stream()>>>(xp, yp, rows, cols, log);
    }
  });
  ST_CUDA_LAUNCH_CHECK();
}

void softmax_backward(const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx) {
  if (rows == 0 || cols == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(rows, 65535 * 16));
  ST_CUDA_FLOAT_CASES(y.dtype(), {
    const T* gp = g.data<T>();
    const T* yp = y.data<T>();
    T* dp = dx.data<T>();
    const int rt = regs_threads<T>(cols, {gp, yp, dp});
    if (rt > 0) {
      softmax_backward_regs_kernel<T, vec_width<T>()><<<blocks, rt, 0, stream()>>>(gp, yp, dp, rows, cols, log);
    } else {
      softmax_backward_kernel<T><<<blocks, row_threads(cols), 0, stream()>>>(gp, yp, dp, rows, cols, log);
    }
  });
  ST_CUDA_LAUNCH_CHECK();
}

}  // namespace st::backend::cuda
