#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace st::cpu {

using backend::ReduceOp;

namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename T>
struct Reducer {
  ReduceOp op;
  acc_t<T> init() const {
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Any: return 0;
      case ReduceOp::Prod:
      case ReduceOp::All: return 1;
      case ReduceOp::Max:
        if constexpr (std::is_floating_point_v<T>) {
          return -std::numeric_limits<double>::infinity();
        } else {
          return static_cast<acc_t<T>>(std::numeric_limits<T>::lowest());
        }
      case ReduceOp::Min:
        if constexpr (std::is_floating_point_v<T>) {
          return std::numeric_limits<double>::infinity();
        } else {
          return static_cast<acc_t<T>>(std::numeric_limits<T>::max());
        }
    }
    return 0;
  }
  acc_t<T> combine(acc_t<T> a, acc_t<T> b) const {
    switch (op) {
      case ReduceOp::Sum: return a + b;
      case ReduceOp::Prod: return a * b;
      case ReduceOp::Max:
        if constexpr (std::is_floating_point_v<T>) {
          if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
        }
        return a > b ? a : b;
      case ReduceOp::Min:
        if constexpr (std::is_floating_point_v<T>) {
          if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
        }
        return a < b ? a : b;
      case ReduceOp::Any: return (a != 0) || (b != 0);
      case ReduceOp::All: return (a != 0) && (b != 0);
    }
    return a;
  }
  // Reduces a contiguous run of n values.
  acc_t<T> run(const T* x, int64_t n) const {
    using A = acc_t<T>;
    if (op == ReduceOp::Sum) {
      if constexpr (std::is_same_v<T, float>) {
        // 32 float lanes per block of 4096 values (128 adds per lane, so float
        // rounding stays ~1e-7 relative), blocks combined in double: runs at load
        // speed instead of the latency of a float->double convert-and-add chain.
        constexpr int64_t kLanes = 32, kBlock = 4096;
        A s = 0;
        int64_t i = 0;
        for (; i + kBlock <= n; i += kBlock) {
          float lane[kLanes] = {};
          for (int64_t j = 0; j < kBlock; j += kLanes) {
#pragma omp simd
            for (int64_t l = 0; l < kLanes; ++l) lane[l] += x[i + j + l];
          }
          for (int64_t l = 0; l < kLanes; ++l) s += static_cast<A>(lane[l]);
        }
        A tail = 0;
#pragma omp simd reduction(+ : tail)
        for (int64_t j = i; j < n; ++j) tail += static_cast<A>(x[j]);
        return s + tail;
      }
      A s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t i = 0; i < n; ++i) s += static_cast<A>(x[i]);
      return s;
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (op == ReduceOp::Max || op == ReduceOp::Min) {
        // Lane-parallel extremum in T; a NaN anywhere poisons the result.
        T m = op == ReduceOp::Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
        bool nan = false;
        if (op == ReduceOp::Max) {
#pragma omp simd reduction(max : m) reduction(|| : nan)
          for (int64_t i = 0; i < n; ++i) {
            m = x[i] > m ? x[i] : m;
            nan = nan || (x[i] != x[i]);
          }
        } else {
#pragma omp simd reduction(min : m) reduction(|| : nan)
          for (int64_t i = 0; i < n; ++i) {
            m = x[i] < m ? x[i] : m;
            nan = nan || (x[i] != x[i]);
          }
        }
        return nan ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(m);
      }
    }
    A acc = init();
    for (int64_t i = 0; i < n; ++i) acc = combine(acc, static_cast<A>(x[i]));
    return acc;
  }
};

template <typename T>
void reduce_typed(ReduceOp op, const Tensor& xt, int64_t outer, int64_t r, int64_t inner, Tensor& outt) {
  using A = acc_t<T>;
  const Reducer<T> red{op};
  const T* x = xt.data<T>();
  T* out = outt.data<T>();
  const int max_threads = omp_get_max_threads();
  if (inner == 1) {
    if (outer >= max_threads || outer * r < kParallelGrain) {
      const int threads = num_threads_for(outer * r);
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t o = 0; o < outer; ++o) out[o] = static_cast<T>(red.run(x + o * r, r));
      return;
    }
    // Few long rows: split each row across threads, then combine the partials.
    for (int64_t o = 0; o < outer; ++o) {
      const int threads = num_threads_for(r);
      std::vector<A> partial(threads, red.init());
      const T* row = x + o * r;
#pragma omp parallel num_threads(threads)
      {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t chunk = (r + nt - 1) / nt;
        const int64_t b = std::min<int64_t>(r, t * chunk), e = std::min<int64_t>(r, b + chunk);
        if (e > b) partial[t] = red.run(row + b, e - b);
      }
      A acc = red.init();
      for (const A p : partial) acc = red.combine(acc, p);
      out[o] = static_cast<T>(acc);
    }
    return;
  }
  // (outer, r, inner): accumulate rows of `inner` values, vectorised along inner.
  const int64_t tile = 256;
  const int64_t tiles = (inner + tile - 1) / tile;
  const int threads = num_threads_for(outer * r * inner);
#pragma omp parallel for num_threads(threads) schedule(static) collapse(2)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t tix = 0; tix < tiles; ++tix) {
      const int64_t j0 = tix * tile, j1 = std::min(inner, j0 + tile);
      A acc[tile];
      for (int64_t j = j0; j < j1; ++j) acc[j - j0] = red.init();
      for (int64_t k = 0; k < r; ++k) {
        const T* row = x + (o * r + k) * inner;
        if (op == ReduceOp::Sum) {
#pragma omp simd
          for (int64_t j = j0; j < j1; ++j) acc[j - j0] += static_cast<A>(row[j]);
        } else {
          for (int64_t j = j0; j < j1; ++j) acc[j - j0] = red.combine(acc[j - j0], static_cast<A>(row[j]));
        }
      }
      for (int64_t j = j0; j < j1; ++j) out[o * inner + j] = static_cast<T>(acc[j - j0]);
    }
  }
}

template <typename T>
void arg_typed(bool is_max, const Tensor& xt, int64_t outer, int64_t r, int64_t inner, Tensor& vt, Tensor& it) {
  const T* x = xt.data<T>();
  T* values = vt.data<T>();
  int64_t* indices = it.data<int64_t>();
  const int threads = num_threads_for(outer * r * inner);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t oi = 0; oi < outer * inner; ++oi) {
    const int64_t o = oi / inner, j = oi % inner;
    const T* base = x + o * r * inner + j;
    T best = base[0];
    int64_t best_i = 0;
    for (int64_t k = 1; k < r; ++k) {
      const T v = base[k * inner];
      if constexpr (std::is_floating_point_v<T>) {
        if (best != best) break;
        if (v != v) {
          best = v;
          best_i = k;
          break;
        }
      }
      if (is_max ? v > best : v < best) {
        best = v;
        best_i = k;
      }
    }
    values[oi] = best;
    indices[oi] = best_i;
  }
}

}  // namespace

void reduce(ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out) {
  ST_DISPATCH_ARITH(x.dtype(), [&] { reduce_typed<scalar_t>(op, x, outer, r, inner, out); });
}

void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,
                Tensor& indices) {
  ST_DISPATCH_ARITH(x.dtype(), [&] { arg_typed<scalar_t>(is_max, x, outer, r, inner, values, indices); });
}

}  // namespace st::cpu
