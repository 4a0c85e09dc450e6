// Binary elementwise kernels (Backend::binary): arithmetic, comparisons and logic over broadcast
// operands, float16/bfloat16 computed in float32 per element. binary.cu, unary.cu and the rest of
// elementwise.cu were one file whose compile (202 s of nvcc) was the CUDA build's longest; apart
// they take 112, 63 and 28 s and compile side by side.
#include <cmath>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/via_float.cuh"
#include "backend/common/int_pow.h"

namespace st::backend::cuda {

using backend::BinaryOp;
using namespace via_float;

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

}  // namespace st::backend::cuda
