// Elementwise kernels: binary, unary, copy (also across devices), fill, where, random,
// the dropout mask and the fused optimizer updates.
#include <cmath>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/philox.cuh"
#include "backend/common/int_pow.h"

namespace st::backend::cuda {

using backend::BinaryOp;
using backend::UnaryOp;

namespace {

template <typename T>
__device__ inline T floor_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return floor(a / b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a;
  } else if constexpr (std::is_unsigned_v<T>) {
    return static_cast<T>(a / b);
  } else {
    // MIN / -1 overflows (undefined; it traps on the CPU): wrap like PyTorch, as the CPU kernel does.
    if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    const T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  }
}
template <typename T>
__device__ inline T py_rem(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else if constexpr (std::is_unsigned_v<T>) {
    return static_cast<T>(a % b);
  } else {
    if (b == T(-1)) return T(0);  // MIN % -1 overflows; the remainder is 0
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

// A float32 kernel body applied to 16-bit storage: each element is widened, computed in
// float32 and rounded once to the storage type (bool results stay bool), exactly what the
// op layer's float32 round trip gives, without the two extra passes over memory.
template <typename S, typename Out, typename F>
struct ViaFloat1 {
  F f;
  __device__ Out operator()(S x) const { return convert<Out>(f(to_f(x))); }
};
template <typename S, typename Out, typename F>
struct ViaFloat2 {
  F f;
  __device__ Out operator()(S x, S y) const { return convert<Out>(f(to_f(x), to_f(y))); }
};
// Storage type of a 16-bit op's output: bool for predicates, else the input's type.
template <typename S, typename Out>
using half_out_t = std::conditional_t<std::is_same_v<Out, bool>, bool, S>;

// A 16-bit tensor beside a float32 0-dim number (Backend::half_with_float_scalar: a number the
// half type cannot hold): the number joins at float32 precision, the result rounds once.
template <typename S, typename Out, typename F>
struct ViaFloatMixed {
  F f;
  __device__ Out operator()(S x, float y) const { return convert<Out>(f(to_f(x), y)); }
  __device__ Out operator()(float x, S y) const { return convert<Out>(f(x, to_f(y))); }
};

template <typename S, typename Out, typename F>
void binary_loop_half(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  using O = half_out_t<S, Out>;
  const auto g = make_geometry<3>(out.shape(), {&out.strides(), &a.strides(), &b.strides()});
  O* o = static_cast<O*>(out.raw_data());
  if (a.dtype() == Dtype::Float32) {
    return launch_map2(g, o, static_cast<const float*>(a.raw_data()), static_cast<const S*>(b.raw_data()),
                       ViaFloatMixed<S, O, F>{f});
  }
  if (b.dtype() == Dtype::Float32) {
    return launch_map2(g, o, static_cast<const S*>(a.raw_data()), static_cast<const float*>(b.raw_data()),
                       ViaFloatMixed<S, O, F>{f});
  }
  launch_map2(g, o, static_cast<const S*>(a.raw_data()), static_cast<const S*>(b.raw_data()), ViaFloat2<S, O, F>{f});
}

template <typename T, typename Out, typename F>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  if constexpr (std::is_same_v<T, float>) {
    // the half operand's type picks the storage (the other may be a float32 number)
    const Dtype h = a.dtype() == Dtype::Float32 ? b.dtype() : a.dtype();
    if (h == Dtype::Float16) return binary_loop_half<__half, Out>(a, b, out, f);
    if (h == Dtype::BFloat16) return binary_loop_half<__nv_bfloat16, Out>(a, b, out, f);
  }
  const auto g = make_geometry<3>(out.shape(), {&out.strides(), &a.strides(), &b.strides()});
  Out* o = static_cast<Out*>(out.raw_data());
  const T* x = static_cast<const T*>(a.raw_data());
  const T* y = static_cast<const T*>(b.raw_data());
  launch_map2(g, o, x, y, f);
}

template <typename T>
void arith(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  constexpr bool kF = std::is_floating_point_v<T>;
  switch (op) {
    case BinaryOp::Add:
      if constexpr (std::is_same_v<T, bool>)
        return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return x || y; });
      else
        return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return static_cast<T>(x + y); });
    case BinaryOp::Sub:
      return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return static_cast<T>(x - y); });
    case BinaryOp::Mul:
      if constexpr (std::is_same_v<T, bool>)
        return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return x && y; });
      else
        return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return static_cast<T>(x * y); });
    case BinaryOp::Div:
      if constexpr (kF) return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return x / y; });
      break;
    case BinaryOp::FloorDiv:
      return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return floor_div(x, y); });
    case BinaryOp::Rem:
      return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return py_rem(x, y); });
    case BinaryOp::Pow:
      if constexpr (kF)
        return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return y == T(2) ? x * x : pow(x, y); });
      else
        return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return int_pow(x, y); });
    case BinaryOp::Min:
      return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) {
        if constexpr (kF) {
          if (x != x) return x;
          if (y != y) return y;
        }
        return x < y ? x : y;
      });
    case BinaryOp::Max:
      return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) {
        if constexpr (kF) {
          if (x != x) return x;
          if (y != y) return y;
        }
        return x > y ? x : y;
      });
    case BinaryOp::Atan2:
      if constexpr (kF) return binary_loop<T, T>(a, b, out, [] __device__(T x, T y) { return atan2(x, y); });
      break;
    case BinaryOp::ReluGrad:
      return binary_loop<T, T>(a, b, out, [] __device__(T g, T y) { return y > T(0) ? g : T(0); });
    case BinaryOp::GeluGrad:
      if constexpr (kF) {
        return binary_loop<T, T>(a, b, out, [] __device__(T g, T x) {
          const T Phi = T(0.5) * (T(1) + erf(x * T(0.7071067811865476)));
          return g * (Phi + x * T(0.3989422804014327) * exp(T(-0.5) * x * x));
        });
      }
      break;
    case BinaryOp::GeluTanhGrad:
      if constexpr (kF) {
        return binary_loop<T, T>(a, b, out, [] __device__(T g, T x) {
          const T k = T(0.7978845608028654), c = T(0.044715);
          const T t = tanh(k * (x + c * x * x * x));
          return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3) * c * x * x));
        });
      }
      break;
    case BinaryOp::Eq:
      return binary_loop<T, bool>(a, b, out, [] __device__(T x, T y) { return x == y; });
    case BinaryOp::Ne:
      return binary_loop<T, bool>(a, b, out, [] __device__(T x, T y) { return x != y; });
    case BinaryOp::Lt:
      return binary_loop<T, bool>(a, b, out, [] __device__(T x, T y) { return x < y; });
    case BinaryOp::Le:
      return binary_loop<T, bool>(a, b, out, [] __device__(T x, T y) { return x <= y; });
    case BinaryOp::Gt:
      return binary_loop<T, bool>(a, b, out, [] __device__(T x, T y) { return x > y; });
    case BinaryOp::Ge:
      return binary_loop<T, bool>(a, b, out, [] __device__(T x, T y) { return x >= y; });
    case BinaryOp::And:
      return binary_loop<T, bool>(a, b, out, [] __device__(T x, T y) { return x != T(0) && y != T(0); });
    case BinaryOp::Or:
      return binary_loop<T, bool>(a, b, out, [] __device__(T x, T y) { return x != T(0) || y != T(0); });
    case BinaryOp::Xor:
      return binary_loop<T, bool>(a, b, out, [] __device__(T x, T y) { return (x != T(0)) != (y != T(0)); });
  }
  throw DtypeError(std::string("binary kernel: op not defined for dtype ") + dtype_name(a.dtype()));
}

template <typename S, typename Out, typename F>
void unary_loop_half(const Tensor& x, Tensor& out, F f) {
  using O = half_out_t<S, Out>;
  const auto g = make_geometry<2>(out.shape(), {&out.strides(), &x.strides()});
  launch_map1(g, static_cast<O*>(out.raw_data()), static_cast<const S*>(x.raw_data()), ViaFloat1<S, O, F>{f});
}

template <typename T, typename Out, typename F>
void unary_loop(const Tensor& x, Tensor& out, F f) {
  if constexpr (std::is_same_v<T, float>) {
    if (x.dtype() == Dtype::Float16) return unary_loop_half<__half, Out>(x, out, f);
    if (x.dtype() == Dtype::BFloat16) return unary_loop_half<__nv_bfloat16, Out>(x, out, f);
  }
  const auto g = make_geometry<2>(out.shape(), {&out.strides(), &x.strides()});
  Out* o = static_cast<Out*>(out.raw_data());
  const T* in = static_cast<const T*>(x.raw_data());
  launch_map1(g, o, in, f);
}

template <typename T>
__device__ inline T sigmoid(T v) {
  return T(1) / (T(1) + exp(-v));
}
template <typename T>
__device__ inline T gelu_tanh(T v) {
  const T k = T(0.7978845608028654), c = T(0.044715);
  return T(0.5) * v * (T(1) + tanh(k * (v + c * v * v * v)));
}

template <typename T>
void float_unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  const T a = static_cast<T>(p0), b = static_cast<T>(p1);
  switch (op) {
    case UnaryOp::Neg:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return -v; });
    case UnaryOp::Abs:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return fabs(v); });
    case UnaryOp::Sign:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return v != v ? v : static_cast<T>((v > 0) - (v < 0)); });
    case UnaryOp::Exp:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return exp(v); });
    case UnaryOp::Log:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return log(v); });
    case UnaryOp::Log1p:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return log1p(v); });
    case UnaryOp::Expm1:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return expm1(v); });
    case UnaryOp::Sqrt:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return sqrt(v); });
    case UnaryOp::Rsqrt:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return T(1) / sqrt(v); });
    case UnaryOp::Square:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return v * v; });
    case UnaryOp::Reciprocal:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return T(1) / v; });
    case UnaryOp::Sin:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return sin(v); });
    case UnaryOp::Cos:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return cos(v); });
    case UnaryOp::Tan:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return tan(v); });
    case UnaryOp::Tanh:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return tanh(v); });
    case UnaryOp::Atanh:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return atanh(v); });
    case UnaryOp::Sigmoid:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return sigmoid(v); });
    case UnaryOp::Relu:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return v > 0 ? v : (v != v ? v : T(0)); });
    case UnaryOp::Gelu:
      return unary_loop<T, T>(x, out,
                              [] __device__(T v) { return T(0.5) * v * (T(1) + erf(v * T(0.7071067811865476))); });
    case UnaryOp::GeluTanh:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return gelu_tanh(v); });
    case UnaryOp::Silu:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return v * sigmoid(v); });
    case UnaryOp::Softplus:
      return unary_loop<T, T>(x, out, [a, b] __device__(T v) { return v * a > b ? v : log1p(exp(v * a)) / a; });
    case UnaryOp::LeakyRelu:
      return unary_loop<T, T>(x, out, [a] __device__(T v) { return v > 0 ? v : v * a; });
    case UnaryOp::Elu:
      return unary_loop<T, T>(x, out, [a] __device__(T v) { return v > 0 ? v : a * expm1(v); });
    case UnaryOp::Floor:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return floor(v); });
    case UnaryOp::Ceil:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return ceil(v); });
    case UnaryOp::Round:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return rint(v); });
    case UnaryOp::Trunc:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return trunc(v); });
    case UnaryOp::Clamp:
      return unary_loop<T, T>(x, out, [a, b] __device__(T v) {
        T r = v;
        if (a == a && r < a) r = a;
        if (b == b && r > b) r = b;
        return r;
      });
    case UnaryOp::Erf:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return erf(v); });
    case UnaryOp::Not:
      return unary_loop<T, bool>(x, out, [] __device__(T v) { return v == T(0); });
    case UnaryOp::IsNan:
      return unary_loop<T, bool>(x, out, [] __device__(T v) { return v != v; });
    case UnaryOp::IsInf:
      return unary_loop<T, bool>(x, out, [] __device__(T v) { return isinf(v); });
    case UnaryOp::IsFinite:
      return unary_loop<T, bool>(x, out, [] __device__(T v) { return isfinite(v); });
  }
}

template <typename T>
void int_unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  switch (op) {
    case UnaryOp::Neg:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return static_cast<T>(-v); });
    case UnaryOp::Abs:
      if constexpr (std::is_unsigned_v<T>)
        return unary_loop<T, T>(x, out, [] __device__(T v) { return v; });
      else
        return unary_loop<T, T>(x, out, [] __device__(T v) { return static_cast<T>(v < 0 ? -v : v); });
    case UnaryOp::Sign:
      if constexpr (std::is_unsigned_v<T>)
        return unary_loop<T, T>(x, out, [] __device__(T v) { return static_cast<T>(v > 0); });
      else
        return unary_loop<T, T>(x, out, [] __device__(T v) { return static_cast<T>((v > 0) - (v < 0)); });
    case UnaryOp::Square:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return static_cast<T>(v * v); });
    case UnaryOp::Relu:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return v > 0 ? v : T(0); });
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
      return unary_loop<T, T>(x, out, [] __device__(T v) { return v; });
    case UnaryOp::Clamp: {
      const bool has_lo = p0 == p0, has_hi = p1 == p1;
      const T lo = has_lo ? static_cast<T>(p0) : T(0), hi = has_hi ? static_cast<T>(p1) : T(0);
      return unary_loop<T, T>(x, out, [=] __device__(T v) {
        T r = v;
        if (has_lo && r < lo) r = lo;
        if (has_hi && r > hi) r = hi;
        return r;
      });
    }
    case UnaryOp::Not:
      return unary_loop<T, bool>(x, out, [] __device__(T v) { return v == T(0); });
    case UnaryOp::IsNan:
    case UnaryOp::IsInf:
      return unary_loop<T, bool>(x, out, [] __device__(T) { return false; });
    case UnaryOp::IsFinite:
      return unary_loop<T, bool>(x, out, [] __device__(T) { return true; });
    default:
      throw DtypeError(std::string("unary kernel: op not defined for dtype ") + dtype_name(x.dtype()));
  }
}

template <typename S, typename D>
void convert_loop(const Tensor& src, Tensor& dst) {
  const auto g = make_geometry<2>(dst.shape(), {&dst.strides(), &src.strides()});
  D* o = static_cast<D*>(dst.raw_data());
  const S* in = static_cast<const S*>(src.raw_data());
  launch_map1(g, o, in, [] __device__(S v) { return convert<D>(v); });
}

}  // namespace

void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  switch (a.dtype()) {
    case Dtype::Bool:
      return arith<bool>(op, a, b, out);
    case Dtype::UInt8:
      return arith<uint8_t>(op, a, b, out);
    case Dtype::Int32:
      return arith<int32_t>(op, a, b, out);
    case Dtype::Int64:
      return arith<int64_t>(op, a, b, out);
    case Dtype::Float16:
    case Dtype::BFloat16:  // computed in float32 per element (binary_loop picks the storage)
    case Dtype::Float32:
      return arith<float>(op, a, b, out);
    case Dtype::Float64:
      return arith<double>(op, a, b, out);
    default:
      throw DtypeError(std::string("binary kernel: unsupported dtype ") + dtype_name(a.dtype()));
  }
}

void unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) {
  switch (x.dtype()) {
    case Dtype::Float16:
    case Dtype::BFloat16:  // computed in float32 per element (unary_loop picks the storage)
    case Dtype::Float32:
      return float_unary<float>(op, x, out, p0, p1);
    case Dtype::Float64:
      return float_unary<double>(op, x, out, p0, p1);
    case Dtype::Int64:
      return int_unary<int64_t>(op, x, out, p0, p1);
    case Dtype::Int32:
      return int_unary<int32_t>(op, x, out, p0, p1);
    case Dtype::UInt8:
      return int_unary<uint8_t>(op, x, out, p0, p1);
    case Dtype::Bool:
      if (op == UnaryOp::Not || op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::IsFinite) {
        return int_unary<uint8_t>(op, x, out, p0, p1);
      }
      [[fallthrough]];
    default:
      throw DtypeError(std::string("unary kernel: unsupported dtype ") + dtype_name(x.dtype()));
  }
}

// Same-device conversion copy.
void copy_on_device(const Tensor& src, Tensor& dst) {
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous() && src.shape() == dst.shape()) {
    ST_CUDA_CHECK(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), src.numel() * src.itemsize(),
                                  cudaMemcpyDeviceToDevice, stream()));
    return;
  }
  STK_DISPATCH_ALL(src.dtype(), [&] {
    using S = scalar_t;
    STK_DISPATCH_ALL(dst.dtype(), [&] { convert_loop<S, scalar_t>(src, dst); });
  });
}

void fill(Tensor& dst, Scalar value) {
  STK_DISPATCH_ALL(dst.dtype(), [&] {
    using T = scalar_t;
    const double dv = value.is_float() ? value.to_double() : static_cast<double>(value.to_int());
    T v;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      v = value.is_float() ? static_cast<T>(dv) : static_cast<T>(value.to_int());
    } else {
      v = convert<T>(dv);
    }
    const auto g = make_geometry<1>(dst.shape(), {&dst.strides()});
    T* o = static_cast<T*>(dst.raw_data());
    launch_geometry<1>(g, [=] __device__(const int64_t(&off)[1]) { o[off[0]] = v; });
  });
}

void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  STK_DISPATCH_ALL(out.dtype(), [&] {
    using T = scalar_t;
    const auto g = make_geometry<4>(out.shape(), {&out.strides(), &cond.strides(), &a.strides(), &b.strides()});
    T* o = static_cast<T*>(out.raw_data());
    const bool* c = static_cast<const bool*>(cond.raw_data());
    const T* x = static_cast<const T*>(a.raw_data());
    const T* y = static_cast<const T*>(b.raw_data());
    launch_geometry<4>(g, [=] __device__(const int64_t(&off)[4]) { o[off[0]] = c[off[1]] ? x[off[2]] : y[off[3]]; });
  });
}

void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) {
  const int64_t n = out.numel();
  ST_CUDA_FLOAT_CASES(out.dtype(), {
    T* o = static_cast<T*>(out.raw_data());
    for_n(n, [=] __device__(int64_t i) {
      if (!normal) {
        const uint4 block = philox(seed, counter + static_cast<uint64_t>(i / 4));
        double u;
        if constexpr (std::is_same_v<T, float>) {
          u = (philox_lane(block, i % 4) >> 8) * (1.0 / 16777216.0);
        } else {
          u = ((static_cast<uint64_t>(philox_lane(block, i % 4)) << 21) ^ philox_lane(block, (i + 1) % 4)) *
              (1.0 / 9007199254740992.0);
          u = u - floor(u);
        }
        T v = static_cast<T>(p0 + (p1 - p0) * u);
        if (v >= static_cast<T>(p1) && p1 > p0) v = nextafter(static_cast<T>(p1), static_cast<T>(p0));
        o[i] = v;
      } else {
        const uint4 block = philox(seed, counter + static_cast<uint64_t>(i / 2));
        const double u1 = ((block.x >> 8) + 1.0) * (1.0 / 16777217.0);
        const double u2 = (block.y >> 8) * (1.0 / 16777216.0);
        const double radius = sqrt(-2.0 * log(u1));
        const double angle = 2.0 * 3.14159265358979323846 * u2;
        const double z = (i % 2 == 0) ? radius * cos(angle) : radius * sin(angle);
        o[i] = static_cast<T>(p0 + p1 * z);
      }
    });
  });
}

void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep) {
  const int64_t n = out.numel();
  const float keep_below = static_cast<float>(keep);
  ST_CUDA_FLOAT_CASES(out.dtype(), {
    T* o = static_cast<T*>(out.raw_data());
    const T s = static_cast<T>(scale);
    for_n(n,
          [=] __device__(int64_t i) { o[i] = dropout_factor(seed, counter, i, keep_below, 1.0f) != 0.0f ? s : T(0); });
  });
}

}  // namespace st::backend::cuda
