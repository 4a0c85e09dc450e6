#pragma once
// Helpers shared by src/nn/conv.cpp and src/nn/pooling.cpp.
#include <string>

#include "spiraltorch/nn/conv.h"

namespace st::nn {

std::string pair_str(Pair p);  // "(a, b)"
// DtypeError unless x is float32 or float64.
void check_conv_float(const Tensor& x, const char* op);

}  // namespace st::nn
