#pragma once
// The elementwise unary kernels' loops and op table (unary.cpp has the entry point). Included by one
// source per dtype family (unary.cpp: float32/float64 and, in the baseline objects, integers and
// bool; unary_bf16.cpp; unary_f16.cpp), as binary_loops.h is, for the same reason: GCC's time on
// one source holding every dtype's loops grows much faster than the sum of the parts.
#include <climits>
#include <cmath>
#include <type_traits>

#include "backend/cpu/baseline_only.h"
#include "backend/cpu/elem_io.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/vmath.h"

namespace st::backend::cpu::CPU_CAPABILITY {

using backend::UnaryOp;

// The half-type instantiations, one source each.
void unary_bf16(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1);
void unary_f16(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1);

namespace {

// out = f(x) elementwise; x is stored as T and read as Compute<T> (elem_io.h), out is stored as Out.
// With `exact`, elements where fast(v) is false take exact(v) instead: a vector loop over a
// cache-sized block, then a pass over the same block that fixes those (libm for the inputs a
// vectorised formula does not cover).
struct NoExact {};
template <typename T, typename Out, typename F, typename Fast = NoExact, typename Exact = NoExact>
void unary_loop(const Tensor& x, Tensor& out, F f, Fast fast = {}, Exact exact = {}) {
  using RT = Raw<T>;
  using RO = Raw<Out>;
  constexpr bool kFixup = !std::is_same_v<Exact, NoExact>;
  constexpr int64_t kBlock = kFixup ? 2048 : INT64_MAX;
  const auto g = make_geometry<2>(out.shape(), {&out.strides(), &x.strides()},
                                  {static_cast<int64_t>(sizeof(Out)), static_cast<int64_t>(sizeof(T))});
  for_each<2>(g, {static_cast<char*>(out.raw_data()), static_cast<char*>(x.raw_data())},
              [&](std::array<char*, 2> p, int64_t n, std::array<int64_t, 2> s) {
    if (s[0] == static_cast<int64_t>(sizeof(Out)) && s[1] == static_cast<int64_t>(sizeof(T))) {
      RO* o = reinterpret_cast<RO*>(p[0]);
      const RT* in = reinterpret_cast<const RT*>(p[1]);
      for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t e = n - b < kBlock ? n : b + kBlock;
        if constexpr (std::is_same_v<T, Half> && kF16cBlocks) {
          half_block_loop<Out>(in + b, nullptr, false, o + b, e - b,
                               [&f](float v, float) ST_VINLINE_LAMBDA { return f(v); });
        } else {
#pragma omp simd
          for (int64_t i = b; i < e; ++i) o[i] = store_elem<Out>(f(load_elem<T>(in[i])));
        }
        if constexpr (kFixup) {
          // a vectorised check first: blocks without such inputs (nearly all) skip the fix loop
          int any = 0;
#pragma omp simd reduction(| : any)
          for (int64_t i = b; i < e; ++i) any |= !fast(load_elem<T>(in[i]));
          for (int64_t i = b; any && i < e; ++i) {
            const auto v = load_elem<T>(in[i]);
            if (!fast(v)) o[i] = store_elem<Out>(exact(v));
          }
        }
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const auto v = load_elem<T>(*reinterpret_cast<const RT*>(p[1] + i * s[1]));
        auto r = f(v);
        if constexpr (kFixup) r = fast(v) ? r : exact(v);
        *reinterpret_cast<RO*>(p[0] + i * s[0]) = store_elem<Out>(r);
      }
    }
  });
}

// S is the storage type; the lambdas compute in T = Compute<S>.
template <typename S>
void float_unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  using T = Compute<S>;
  const T a = static_cast<T>(p0), b = static_cast<T>(p1);
  constexpr auto kTrigFast = [](T v) { return trig_fast_range(v); };
  switch (op) {
    case UnaryOp::Neg:
      return unary_loop<S, S>(x, out, [](T v) { return -v; });
    case UnaryOp::Abs:
      return unary_loop<S, S>(x, out, [](T v) { return std::fabs(v); });
    case UnaryOp::Sign:
      return unary_loop<S, S>(x, out, [](T v) { return v != v ? v : static_cast<T>((v > 0) - (v < 0)); });
    case UnaryOp::Exp:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vexp_normal(v); },
                              [](T v) { return exp_normal_range(v); }, [](T v) { return std::exp(v); });
    case UnaryOp::Log:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vlog_normal(v); },
                              [](T v) { return log_normal_range(v); }, [](T v) { return std::log(v); });
    case UnaryOp::Log1p:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vlog1p(v); });
    case UnaryOp::Expm1:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vexpm1(v); });
    case UnaryOp::Sqrt:
      return unary_loop<S, S>(x, out, [](T v) { return std::sqrt(v); });
    case UnaryOp::Rsqrt:
      return unary_loop<S, S>(x, out, [](T v) { return T(1) / std::sqrt(v); });
    case UnaryOp::Square:
      return unary_loop<S, S>(x, out, [](T v) { return v * v; });
    case UnaryOp::Reciprocal:
      return unary_loop<S, S>(x, out, [](T v) { return T(1) / v; });
    case UnaryOp::Sin:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vsin(v); }, kTrigFast,
                              [](T v) { return std::sin(v); });
    case UnaryOp::Cos:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vcos(v); }, kTrigFast,
                              [](T v) { return std::cos(v); });
    case UnaryOp::Tan:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vtan(v); }, kTrigFast,
                              [](T v) { return std::tan(v); });
    case UnaryOp::Tanh:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vtanh(v); });
    case UnaryOp::Atanh:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vatanh(v); });
    case UnaryOp::Sigmoid:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vsigmoid_normal(v); },
                              [](T v) { return sigmoid_normal_range(v); }, [](T v) { return vsigmoid(v); });
    case UnaryOp::Relu:
      return unary_loop<S, S>(x, out, [](T v) { return v > 0 ? v : (v != v ? v : T(0)); });
    case UnaryOp::Gelu:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vgelu(v); });
    case UnaryOp::GeluTanh:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return vgelu_tanh(v); });
    case UnaryOp::Silu:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return v * vsigmoid_normal(v); },
                              [](T v) { return sigmoid_normal_range(v); }, [](T v) { return v * vsigmoid(v); });
    case UnaryOp::Softplus:  // p0 = beta, p1 = threshold
      return unary_loop<S, S>(x, out, [a, b](T v) { return v * a > b ? v : std::log1p(std::exp(v * a)) / a; });
    case UnaryOp::LeakyRelu:
      return unary_loop<S, S>(x, out, [a](T v) { return v > 0 ? v : v * a; });
    case UnaryOp::Elu:
      return unary_loop<S, S>(x, out, [a](T v) { return v > 0 ? v : a * std::expm1(v); });
    case UnaryOp::Floor:
      return unary_loop<S, S>(x, out, [](T v) { return std::floor(v); });
    case UnaryOp::Ceil:
      return unary_loop<S, S>(x, out, [](T v) { return std::ceil(v); });
    case UnaryOp::Round:
      return unary_loop<S, S>(x, out, [](T v) { return std::nearbyint(v); });
    case UnaryOp::Trunc:
      return unary_loop<S, S>(x, out, [](T v) { return std::trunc(v); });
    case UnaryOp::Clamp:  // NaN bounds are passed as "no bound"; NaN inputs propagate
      return unary_loop<S, S>(x, out, [a, b](T v) {
        T r = v;
        if (a == a && r < a) r = a;
        if (b == b && r > b) r = b;
        return r;
      });
    case UnaryOp::Erf:
      return unary_loop<S, S>(x, out, [](T v) ST_VINLINE_LAMBDA { return verf(v); });
    case UnaryOp::Not:
      return unary_loop<S, bool>(x, out, [](T v) { return v == T(0); });
    case UnaryOp::IsNan:
      return unary_loop<S, bool>(x, out, [](T v) { return v != v; });
    case UnaryOp::IsInf:
      return unary_loop<S, bool>(x, out, [](T v) { return std::isinf(v); });
    case UnaryOp::IsFinite:
      return unary_loop<S, bool>(x, out, [](T v) { return std::isfinite(v); });
  }
}

template <typename T>
void int_unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  switch (op) {
    case UnaryOp::Neg:
      return unary_loop<T, T>(x, out, [](T v) { return static_cast<T>(-v); });
    case UnaryOp::Abs:
      return unary_loop<T, T>(x, out, [](T v) { return static_cast<T>(v < 0 ? -v : v); });
    case UnaryOp::Sign:
      return unary_loop<T, T>(x, out, [](T v) { return static_cast<T>((v > 0) - (v < 0)); });
    case UnaryOp::Square:
      return unary_loop<T, T>(x, out, [](T v) { return static_cast<T>(v * v); });
    case UnaryOp::Relu:
      return unary_loop<T, T>(x, out, [](T v) { return v > 0 ? v : T(0); });
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
      return unary_loop<T, T>(x, out, [](T v) { return v; });
    case UnaryOp::Clamp: {
      const bool has_lo = p0 == p0, has_hi = p1 == p1;
      const T lo = has_lo ? static_cast<T>(p0) : T(0), hi = has_hi ? static_cast<T>(p1) : T(0);
      return unary_loop<T, T>(x, out, [=](T v) {
        T r = v;
        if (has_lo && r < lo) r = lo;
        if (has_hi && r > hi) r = hi;
        return r;
      });
    }
    case UnaryOp::Not:
      return unary_loop<T, bool>(x, out, [](T v) { return v == T(0); });
    case UnaryOp::IsNan:
    case UnaryOp::IsInf:
      return unary_loop<T, bool>(x, out, [](T) { return false; });
    case UnaryOp::IsFinite:
      return unary_loop<T, bool>(x, out, [](T) { return true; });
    default:
      throw DtypeError(std::string("unary kernel: op not defined for dtype ") + dtype_name(x.dtype()));
  }
}

}  // namespace

}  // namespace st::backend::cpu::CPU_CAPABILITY
