// Unary elementwise kernels (Backend::unary): float and integer ops, float16/bfloat16 computed in
// float32 per element. Its own translation unit (see binary.cu).
#include <cmath>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/via_float.cuh"

namespace st::backend::cuda {

using backend::UnaryOp;
using namespace via_float;

namespace {

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

}  // namespace

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

}  // namespace st::backend::cuda
