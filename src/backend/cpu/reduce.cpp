#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/elem_io.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

using backend::ReduceOp;

namespace {

// T is the storage type; float16/bfloat16 are read as float (elem_io.h) and reduce into a float32
// out, like float32 inputs, with no float32 copy of the input.
template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<Compute<T>>, double, int64_t>;

template <typename T>
struct Reducer {
  using C = Compute<T>;
  ReduceOp op;
  acc_t<T> init() const {
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Any:
        return 0;
      case ReduceOp::Prod:
      case ReduceOp::All:
        return 1;
      case ReduceOp::Max:
        if constexpr (std::is_floating_point_v<C>) {
          return -std::numeric_limits<double>::infinity();
        } else {
          return static_cast<acc_t<T>>(std::numeric_limits<T>::lowest());
        }
      case ReduceOp::Min:
        if constexpr (std::is_floating_point_v<C>) {
          return std::numeric_limits<double>::infinity();
        } else {
          return static_cast<acc_t<T>>(std::numeric_limits<T>::max());
        }
    }
    return 0;
  }
  acc_t<T> combine(acc_t<T> a, acc_t<T> b) const {
    switch (op) {
      case ReduceOp::Sum:
        return a + b;
      case ReduceOp::Prod:
        return a * b;
      case ReduceOp::Max:
        if constexpr (std::is_floating_point_v<C>) {
          if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
        }
        return a > b ? a : b;
      case ReduceOp::Min:
        if constexpr (std::is_floating_point_v<C>) {
          if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
        }
        return a < b ? a : b;
      case ReduceOp::Any:
        return (a != 0) || (b != 0);
      case ReduceOp::All:
        return (a != 0) && (b != 0);
    }
    return a;
  }
  // Reduces a contiguous run of n values.
  acc_t<T> run(const Raw<T>* x, int64_t n) const {
    using A = acc_t<T>;
    if constexpr (std::is_same_v<C, float>) {
      if (op == ReduceOp::Sum) return float_sum(x, n);
      if (op == ReduceOp::Max) return float_extremum<true>(x, n);
      if (op == ReduceOp::Min) return float_extremum<false>(x, n);
    }
    if (op == ReduceOp::Sum) {
      A s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t i = 0; i < n; ++i) s += static_cast<A>(load_elem<T>(x[i]));
      return s;
    }
    if constexpr (std::is_floating_point_v<C>) {
      if (op == ReduceOp::Max || op == ReduceOp::Min) {
        // Lane-parallel extremum in C; a NaN anywhere poisons the result.
        C m = op == ReduceOp::Max ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
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
    for (int64_t i = 0; i < n; ++i) acc = combine(acc, static_cast<A>(load_elem<T>(x[i])));
    return acc;
  }

  // Float inputs (float32 and the half types read as float) reduce in kLanes float lanes, which
  // vectorise with the loads; sums flush the lanes into double every kBlock values (128 adds per
  // lane, so float rounding stays ~1e-7 relative): load speed instead of the latency of a
  // float->double convert-and-add chain.
  // float16 goes through F16C's conversions (add_halves, halves_to_floats): GCC vectorises Half's
  // bit-manipulating conversion poorly inside these loops (2.3x slower).
  static constexpr int64_t kLanes = 32, kBlock = 4096;
  // n values as floats: float32 in place, float16 through F16C, bfloat16 widened into buf. (A copy
  // loop for float32 compiles into a memcpy call.)
  static const float* floats_of(const Raw<T>* x, int64_t n, float* buf) {
    if constexpr (std::is_same_v<Raw<T>, float>) {
      return x;
    } else if constexpr (std::is_same_v<T, Half>) {
      halves_to_floats(x, n, buf);  // elem_io.h
    } else {
#pragma omp simd
      for (int64_t l = 0; l < n; ++l) buf[l] = load_elem<T>(x[l]);
    }
    return buf;
  }
  static double float_sum(const Raw<T>* x, int64_t n) {
    double s = 0;
    int64_t i = 0;
    while (n - i >= kLanes) {
      const int64_t e = i + std::min<int64_t>(kBlock, (n - i) / kLanes * kLanes);
      float lane[kLanes] = {};
      for (; i < e; i += kLanes) {
        if constexpr (std::is_same_v<T, Half>) {
          add_halves(lane, x + i, kLanes);  // F16C, elem_io.h
        } else {
#pragma omp simd
          for (int64_t l = 0; l < kLanes; ++l) lane[l] += load_elem<T>(x[i + l]);
        }
      }
#pragma omp simd reduction(+ : s)
      for (int64_t l = 0; l < kLanes; ++l) s += static_cast<double>(lane[l]);
    }
    for (; i < n; ++i) s += static_cast<double>(load_elem<T>(x[i]));
    return s;
  }
  // Max (kMax) or min; a NaN anywhere makes the result NaN.
  template <bool kMax>
  static double float_extremum(const Raw<T>* x, int64_t n) {
    constexpr float kInit = kMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    float lane[kLanes], bad[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = kInit, bad[l] = 0.0f;
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      float buf[kLanes];
      const float* v = floats_of(x + i, kLanes, buf);
#pragma omp simd
      for (int64_t l = 0; l < kLanes; ++l) {
        lane[l] = (kMax ? v[l] > lane[l] : v[l] < lane[l]) ? v[l] : lane[l];
        bad[l] = v[l] != v[l] ? 1.0f : bad[l];
      }
    }
    float m = kInit;
    bool nan = false;
    for (int64_t l = 0; l < kLanes; ++l) {
      m = (kMax ? lane[l] > m : lane[l] < m) ? lane[l] : m;
      nan |= bad[l] != 0.0f;
    }
    for (; i < n; ++i) {
      const float v = load_elem<T>(x[i]);
      m = (kMax ? v > m : v < m) ? v : m;
      nan |= v != v;
    }
    return nan ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(m);
  }
};

template <typename T>
void reduce_typed(ReduceOp op, const Tensor& xt, int64_t outer, int64_t r, int64_t inner, Tensor& outt) {
  using A = acc_t<T>;
  using O = Compute<T>;
  const Reducer<T> red{op};
  const Raw<T>* x = static_cast<const Raw<T>*>(xt.raw_data());
  O* out = outt.data<O>();
  const int max_threads = omp_get_max_threads();
  if (inner == 1) {
    if (outer >= max_threads || outer * r < kParallelGrain) {
      const int threads = num_threads_for(outer * r);
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t o = 0; o < outer; ++o) out[o] = static_cast<O>(red.run(x + o * r, r));
      return;
    }
    // Few long rows: split each row across threads, then combine the partials.
    for (int64_t o = 0; o < outer; ++o) {
      const int threads = num_threads_for(r);
      std::vector<A> partial(threads, red.init());
      const Raw<T>* row = x + o * r;
#pragma omp parallel num_threads(threads)
      {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t chunk = (r + nt - 1) / nt;
        const int64_t b = std::min<int64_t>(r, t * chunk), e = std::min<int64_t>(r, b + chunk);
        if (e > b) partial[t] = red.run(row + b, e - b);
      }
      A acc = red.init();
      for (const A p : partial) acc = red.combine(acc, p);
      out[o] = static_cast<O>(acc);
    }
    return;
  }
  // (outer, r, inner): accumulate rows of `inner` values, vectorised along inner.
  constexpr int64_t tile = 256, kRowBlock = 128;
  const int64_t tiles = (inner + tile - 1) / tile;
  const int threads = num_threads_for(outer * r * inner);
#pragma omp parallel for num_threads(threads) schedule(static) collapse(2)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t tix = 0; tix < tiles; ++tix) {
      const int64_t j0 = tix * tile, j1 = std::min(inner, j0 + tile);
      A acc[tile];
      for (int64_t j = j0; j < j1; ++j) acc[j - j0] = red.init();
      for (int64_t k0 = 0; k0 < r; k0 += kRowBlock) {
        const int64_t k1 = std::min(r, k0 + kRowBlock);
        if constexpr (std::is_same_v<Compute<T>, float>) {
          if (op == ReduceOp::Sum) {
            // float partial sums over a block of rows, flushed into double (as Reducer::float_sum)
            float part[tile] = {};
            for (int64_t k = k0; k < k1; ++k) {
              const Raw<T>* row = x + (o * r + k) * inner + j0;
              if constexpr (std::is_same_v<T, Half>) {
                float v[tile];
                halves_to_floats(row, j1 - j0, v);
#pragma omp simd
                for (int64_t j = 0; j < j1 - j0; ++j) part[j] += v[j];
              } else {
#pragma omp simd
                for (int64_t j = 0; j < j1 - j0; ++j) part[j] += load_elem<T>(row[j]);
              }
            }
            for (int64_t j = j0; j < j1; ++j) acc[j - j0] += static_cast<A>(part[j - j0]);
            continue;
          }
          if (op == ReduceOp::Max || op == ReduceOp::Min) {
            // float compare-selects over the block, NaN tracked per column (combine's rule)
            const int64_t w = j1 - j0;
            float part[tile], v[tile], bad[tile];
            for (int64_t j = 0; j < w; ++j) part[j] = static_cast<float>(acc[j]), bad[j] = 0.0f;
            for (int64_t k = k0; k < k1; ++k) {
              const float* src = Reducer<T>::floats_of(x + (o * r + k) * inner + j0, w, v);
              if (op == ReduceOp::Max) {
#pragma omp simd
                for (int64_t j = 0; j < w; ++j) part[j] = src[j] > part[j] ? src[j] : part[j];
              } else {
#pragma omp simd
                for (int64_t j = 0; j < w; ++j) part[j] = src[j] < part[j] ? src[j] : part[j];
              }
#pragma omp simd
              for (int64_t j = 0; j < w; ++j) bad[j] = src[j] != src[j] ? 1.0f : bad[j];
            }
            for (int64_t j = 0; j < w; ++j) {
              acc[j] = bad[j] != 0.0f || acc[j] != acc[j] ? std::numeric_limits<double>::quiet_NaN()
                                                          : static_cast<A>(part[j]);
            }
            continue;
          }
        }
        for (int64_t k = k0; k < k1; ++k) {
          const Raw<T>* row = x + (o * r + k) * inner;
          if (op == ReduceOp::Sum) {
#pragma omp simd
            for (int64_t j = j0; j < j1; ++j) acc[j - j0] += static_cast<A>(load_elem<T>(row[j]));
          } else {
            for (int64_t j = j0; j < j1; ++j)
              acc[j - j0] = red.combine(acc[j - j0], static_cast<A>(load_elem<T>(row[j])));
          }
        }
      }
      for (int64_t j = j0; j < j1; ++j) out[o * inner + j] = static_cast<O>(acc[j - j0]);
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
  if (x.dtype() == Dtype::Float16) return reduce_typed<Half>(op, x, outer, r, inner, out);
  if (x.dtype() == Dtype::BFloat16) return reduce_typed<BFloat16>(op, x, outer, r, inner, out);
  ST_DISPATCH_ARITH(x.dtype(), [&] { reduce_typed<scalar_t>(op, x, outer, r, inner, out); });
}

void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,
                Tensor& indices) {
  ST_DISPATCH_ARITH(x.dtype(), [&] { arg_typed<scalar_t>(is_max, x, outer, r, inner, values, indices); });
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
