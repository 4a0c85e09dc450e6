#pragma once
// The weight side of a linear layer's backward, shared by the fused nodes that contain one
// (linear, feed_forward).
#include "spiraltorch/tensor.h"

namespace st::nn::detail {

// dw = dy^T x (n, k) and, when with_bias, db = dy's column sums (n,), both of dtype pdt (x's, or
// float32 for autocast's master weights): one GEMM with the bias gradient in its epilogue where the
// backend has one (Backend::linear_bias_backward_weight), otherwise matmul and sum. dy (m, n) and
// x (m, k) contiguous, of one dtype.
void linear_weight_grads(const Tensor& dy, const Tensor& x, Dtype pdt, bool with_bias, Tensor& dw, Tensor& db);

}  // namespace st::nn::detail
