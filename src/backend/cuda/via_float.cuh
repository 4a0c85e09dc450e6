// The 16-bit storage adapters of the elementwise kernels (binary.cu, unary.cu): a float32 kernel
// body applied to float16/bfloat16 elements.
#pragma once

#include <type_traits>

#include "backend/cuda/common.cuh"

namespace st::backend::cuda::via_float {

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

}  // namespace st::backend::cuda::via_float
