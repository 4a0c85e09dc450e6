#pragma once
// Losses composed from differentiable ops, used for tensors on devices other than the
// CPU (the fused loops in loss.cpp read host memory). Same semantics as the fused forms.
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/tensor.h"

namespace st::nn::device_loss {

Tensor mse(const Tensor& pred, const Tensor& target);
Tensor l1(const Tensor& pred, const Tensor& target);
Tensor huber(const Tensor& pred, const Tensor& target, double delta);
Tensor bce_with_logits(const Tensor& logits, const Tensor& target, const Tensor& pos_weight);
// Returns the reduced loss.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     Reduction reduction, double label_smoothing, bool logits_are_log_probs);

}  // namespace st::nn::device_loss
