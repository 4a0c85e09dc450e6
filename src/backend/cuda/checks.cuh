#pragma once
// Argument guards of the float-only CUDA kernels (pooling, depthwise convolution, RNN):
// ST_CUDA_FLOAT_CASES runs every non-float64 dtype as float32, so a float16 tensor that
// slipped past the op layer would be read with the wrong element size.
#include <string>

#include "spiraltorch/error.h"
#include "spiraltorch/tensor.h"

namespace st::backend::cuda {

inline void require_float32_or_64(const Tensor& t, const char* op) {
  if (t.dtype() != Dtype::Float32 && t.dtype() != Dtype::Float64) {
    throw DtypeError(std::string(op) + " kernel: expected float32 or float64, got " + dtype_name(t.dtype()));
  }
}

}  // namespace st::backend::cuda
