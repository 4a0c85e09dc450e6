#pragma once
// The elementwise binary kernels' loops and op table (binary.cpp has the entry point). Included by
// one source per dtype family (binary.cpp: float32/float64 and, in the baseline objects, integers
// and bool; binary_bf16.cpp; binary_f16.cpp): compiled together in one source, the half types'
// loops took GCC 100 s per capability against 5 + 11 + 14 s apart.
#include <cmath>

#include "backend/common/int_pow.h"
#include "backend/cpu/baseline_only.h"
#include "backend/cpu/elem_io.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/vmath.h"

namespace st::backend::cpu::CPU_CAPABILITY {

using backend::BinaryOp;

// The half-type instantiations, one source each.
void binary_bf16(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out);
void binary_f16(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out);

namespace {

// out = f(a, b) elementwise; a and b are stored as T and read as Compute<T> (elem_io.h), out is
// stored as Out.
// A float32 operand beside a half-type T is a 0-dim number (Backend::half_with_float_scalar): its
// value joins f as a constant and the loop runs over the other operand alone.
template <typename T, typename Out, typename F>
void binary_loop_same(const Tensor& a, const Tensor& b, Tensor& out, F f);

// The unused operand's slot gets a zero-stride view of the half tensor: the loops read it once.
inline Tensor zero_stride_view(const Tensor& t) {
  return Tensor::from_storage(t.storage(), t.shape(), Shape(t.shape().size(), 0), t.offset(), t.dtype());
}

template <typename T, typename Out, typename F>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  if constexpr (kHalfType<T>) {
    if (b.dtype() == Dtype::Float32) {
      const float bv = *b.data<float>();
      return binary_loop_same<T, Out>(a, zero_stride_view(a), out,
                                      [f, bv](float x, float) ST_VINLINE_LAMBDA { return f(x, bv); });
    }
    if (a.dtype() == Dtype::Float32) {
      const float av = *a.data<float>();
      return binary_loop_same<T, Out>(zero_stride_view(b), b, out,
                                      [f, av](float, float y) ST_VINLINE_LAMBDA { return f(av, y); });
    }
  }
  binary_loop_same<T, Out>(a, b, out, f);
}

// a and b both stored as T.
template <typename T, typename Out, typename F>
void binary_loop_same(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  using RT = Raw<T>;
  using RO = Raw<Out>;
  const auto g = make_geometry<3>(
      out.shape(), {&out.strides(), &a.strides(), &b.strides()},
      {static_cast<int64_t>(sizeof(Out)), static_cast<int64_t>(sizeof(T)), static_cast<int64_t>(sizeof(T))});
  for_each<3>(g,
              {static_cast<char*>(out.raw_data()), static_cast<char*>(a.raw_data()), static_cast<char*>(b.raw_data())},
              [&](std::array<char*, 3> p, int64_t n, std::array<int64_t, 3> s) {
    RO* o = reinterpret_cast<RO*>(p[0]);
    const RT* x = reinterpret_cast<const RT*>(p[1]);
    const RT* y = reinterpret_cast<const RT*>(p[2]);
    constexpr int64_t so = sizeof(Out), st = sizeof(T);
    if constexpr (std::is_same_v<T, Half> && kF16cBlocks) {
      // a scalar first operand is handled as f with its arguments swapped
      if (s[0] == so && s[1] == st && (s[2] == st || s[2] == 0)) {
        return half_block_loop<Out>(x, y, s[2] == 0, o, n, f);
      }
      if (s[0] == so && s[1] == 0 && s[2] == st) {
        return half_block_loop<Out>(y, x, true, o, n, [&f](float v, float u) ST_VINLINE_LAMBDA { return f(u, v); });
      }
    }
    if (s[0] == so && s[1] == st && s[2] == st) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) o[i] = store_elem<Out>(f(load_elem<T>(x[i]), load_elem<T>(y[i])));
    } else if (s[0] == so && s[1] == 0 && s[2] == st) {
      const auto xv = load_elem<T>(*x);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) o[i] = store_elem<Out>(f(xv, load_elem<T>(y[i])));
    } else if (s[0] == so && s[1] == st && s[2] == 0) {
      const auto yv = load_elem<T>(*y);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) o[i] = store_elem<Out>(f(load_elem<T>(x[i]), yv));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<RO*>(p[0] + i * s[0]) =
            store_elem<Out>(f(load_elem<T>(*reinterpret_cast<const RT*>(p[1] + i * s[1])),
                              load_elem<T>(*reinterpret_cast<const RT*>(p[2] + i * s[2]))));
      }
    }
  });
}

template <typename T>
constexpr bool kFloat = std::is_floating_point_v<T>;

// Integer +, -, * wrap like NumPy and PyTorch. Computed in the unsigned type because
// signed overflow is undefined behaviour in C++ (UBSan reports it; the optimiser may
// assume it never happens).
template <typename T, typename F>
T wrapping(T x, T y, F f) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(f(static_cast<U>(x), static_cast<U>(y))));
  } else {
    return static_cast<T>(f(x, y));
  }
}

template <typename T>
T floor_div(T a, T b) {
  if constexpr (kFloat<T>) {
    return std::floor(a / b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a;
  } else {
    // MIN / -1 overflows and traps (SIGFPE) in hardware; wrap like PyTorch (-MIN == MIN).
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    }
    const T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
}

template <typename T>
T py_rem(T a, T b) {
  if constexpr (kFloat<T>) {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else {
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);  // MIN % -1 traps in hardware; the remainder is 0
    }
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

// Comparisons and logic: the ops predicate() computes (bool results).
inline bool is_predicate(BinaryOp op) {
  switch (op) {
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::And:
    case BinaryOp::Or:
    case BinaryOp::Xor:
      return true;
    default:
      return false;
  }
}

// Comparisons and logic (bool results); S is the storage type, compared as T = Compute<S>.
template <typename S>
void predicate(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  using T = Compute<S>;
  switch (op) {
    case BinaryOp::Eq:
      return binary_loop<S, bool>(a, b, out, [](T x, T y) { return x == y; });
    case BinaryOp::Ne:
      return binary_loop<S, bool>(a, b, out, [](T x, T y) { return x != y; });
    case BinaryOp::Lt:
      return binary_loop<S, bool>(a, b, out, [](T x, T y) { return x < y; });
    case BinaryOp::Le:
      return binary_loop<S, bool>(a, b, out, [](T x, T y) { return x <= y; });
    case BinaryOp::Gt:
      return binary_loop<S, bool>(a, b, out, [](T x, T y) { return x > y; });
    case BinaryOp::Ge:
      return binary_loop<S, bool>(a, b, out, [](T x, T y) { return x >= y; });
    case BinaryOp::And:
      return binary_loop<S, bool>(a, b, out, [](T x, T y) { return x != T(0) && y != T(0); });
    case BinaryOp::Or:
      return binary_loop<S, bool>(a, b, out, [](T x, T y) { return x != T(0) || y != T(0); });
    case BinaryOp::Xor:
      return binary_loop<S, bool>(a, b, out, [](T x, T y) { return (x != T(0)) != (y != T(0)); });
    default:
      break;
  }
  throw DtypeError(std::string("binary kernel: not a comparison for dtype ") + dtype_name(a.dtype()));
}

// S is the storage type; the lambdas compute in T = Compute<S>.
template <typename S>
void arith(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  using T = Compute<S>;
  if (is_predicate(op)) {
    if constexpr (kBaselineObject || std::is_same_v<S, float> || std::is_same_v<S, double>) {
      return predicate<S>(op, a, b, out);
    }
    throw DtypeError(std::string("binary kernel: op not defined for dtype ") + dtype_name(a.dtype()));
  }
  switch (op) {
    case BinaryOp::Add:
      if constexpr (std::is_same_v<T, bool>) {
        return binary_loop<S, S>(a, b, out, [](T x, T y) { return x || y; });
      } else {
        return binary_loop<S, S>(a, b, out,
                                 [](T x, T y) { return wrapping(x, y, [](auto p, auto q) { return p + q; }); });
      }
    case BinaryOp::Sub:
      return binary_loop<S, S>(a, b, out,
                               [](T x, T y) { return wrapping(x, y, [](auto p, auto q) { return p - q; }); });
    case BinaryOp::Mul:
      if constexpr (std::is_same_v<T, bool>) {
        return binary_loop<S, S>(a, b, out, [](T x, T y) { return x && y; });
      } else {
        return binary_loop<S, S>(a, b, out,
                                 [](T x, T y) { return wrapping(x, y, [](auto p, auto q) { return p * q; }); });
      }
    case BinaryOp::Div:
      if constexpr (kFloat<T>) return binary_loop<S, S>(a, b, out, [](T x, T y) { return x / y; });
      break;
    case BinaryOp::FloorDiv:
      return binary_loop<S, S>(a, b, out, [](T x, T y) { return floor_div(x, y); });
    case BinaryOp::Rem:
      return binary_loop<S, S>(a, b, out, [](T x, T y) { return py_rem(x, y); });
    case BinaryOp::Pow:
      if constexpr (kFloat<T>) {
        return binary_loop<S, S>(a, b, out, [](T x, T y) { return y == T(2) ? x * x : std::pow(x, y); });
      } else {
        return binary_loop<S, S>(a, b, out, [](T x, T y) { return int_pow(x, y); });
      }
    case BinaryOp::Min:
      return binary_loop<S, S>(a, b, out, [](T x, T y) {
        if constexpr (kFloat<T>) {
          if (x != x) return x;
          if (y != y) return y;
        }
        return x < y ? x : y;
      });
    case BinaryOp::Max:
      return binary_loop<S, S>(a, b, out, [](T x, T y) {
        if constexpr (kFloat<T>) {
          if (x != x) return x;
          if (y != y) return y;
        }
        return x > y ? x : y;
      });
    case BinaryOp::Atan2:
      if constexpr (kFloat<T>) return binary_loop<S, S>(a, b, out, [](T x, T y) { return std::atan2(x, y); });
      break;
    case BinaryOp::ReluGrad:
      return binary_loop<S, S>(a, b, out, [](T g, T y) { return y > T(0) ? g : T(0); });
    case BinaryOp::GeluGrad:
      if constexpr (kFloat<T>) {
        return binary_loop<S, S>(a, b, out, [](T g, T x) ST_VINLINE_LAMBDA { return g * vgelu_grad(x); });
      }
      break;
    case BinaryOp::GeluTanhGrad:
      if constexpr (kFloat<T>) {
        return binary_loop<S, S>(a, b, out, [](T g, T x) ST_VINLINE_LAMBDA { return g * vgelu_tanh_grad(x); });
      }
      break;
    default:  // the predicates, above
      break;
  }
  throw DtypeError(std::string("binary kernel: op not defined for dtype ") + dtype_name(a.dtype()));
}

}  // namespace

}  // namespace st::backend::cpu::CPU_CAPABILITY
