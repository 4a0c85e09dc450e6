#pragma once
#include "spiraltorch/tensor.h"

namespace st::nn::init {

// PyTorch's default for Linear/Conv: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for both
// weight (kaiming_uniform with a = sqrt(5)) and bias.
Tensor kaiming_uniform(const Shape& shape, int64_t fan_in, Dtype dtype = Dtype::Float32);
Tensor uniform(const Shape& shape, double bound, Dtype dtype = Dtype::Float32);

}  // namespace st::nn::init
