#pragma once
// Functional forms of the basic layers (spiraltorch.nn.functional). Each checks its
// arguments, names itself in errors and records autograd. layer_norm has a fused
// forward and an analytic backward; the others build on ops.h.
#include <optional>
#include <string>
#include <utility>

#include "spiraltorch/ops.h"

namespace st::nn {

// Normalises over the trailing dims `normalized_shape` (PyTorch's layer_norm):
// y = (x - mean) / sqrt(var + eps) * weight + bias, biased variance per row.
// weight and bias may be undefined (no affine transform); when given their shape is
// `normalized_shape`. Fused: one pass over rows (OpenMP) keeps mean and 1/std for
// the backward, which is analytic (and differentiable again under create_graph).
Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);

// The transformer's residual step in one: h = residual + dropout(delta, p, training), returned
// with layer_norm(h, normalized_shape, weight, bias, eps) as {h, normalised}. Equal to that
// composite (then cast to out_dtype, when given), dropout drawing the same numbers from `gen` (or
// the global generator); a backend with a fused kernel (CUDA) makes one pass forward and one
// backward, rounding the normalised rows once to out_dtype (a transformer layer asks for the
// autocast dtype its next product casts them to). Other backends run the composite's kernels behind
// the same one autograd node (no dropout mask or delta kept) where residual, delta and the output
// share a dtype, and the composite itself otherwise. residual and delta have one shape; under
// autocast delta may stay half (a product's output) beside a float32 residual. delta undefined:
// h = residual and only the layer norm runs.
std::pair<Tensor, Tensor> add_layer_norm(const Tensor& residual, const Tensor& delta, const Shape& normalized_shape,
                                         const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5,
                                         double p = 0.0, bool training = true, Generator* gen = nullptr,
                                         std::optional<Dtype> out_dtype = std::nullopt);

// Rows of `weight` (num_embeddings, embedding_dim) picked by integer `indices` of any
// shape; the result has shape indices.shape + (embedding_dim,). The row at
// `padding_idx` (if given, may be negative) receives no gradient.
Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx = {});

// Zeroes each element with probability p (global generator) and scales the rest by
// 1/(1-p) when `training`; the identity otherwise.
// Draws from `gen`, or from the global generator when it is null.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true, Generator* gen = nullptr);

// Batch normalisation over every dim except 1 (channels), like PyTorch's batch_norm.
// training: normalise with the batch statistics and, when running_mean/running_var are
// defined, update them in place (running_var with the unbiased variance):
// r = (1 - momentum) * r + momentum * batch_stat. Not training: use the running stats.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight = {},
                  const Tensor& bias = {}, bool training = false, double momentum = 0.1, double eps = 1e-5);

// GELU by name: approximate is "none" (erf) or "tanh".
Tensor gelu(const Tensor& input, const std::string& approximate);

// A transformer's feed-forward block without dropout: linear(act(linear(input, weight1, bias1)),
// weight2, bias2), act "relu", "gelu" (erf) or "gelu_tanh"; weight1 (hidden, in), weight2 (out,
// hidden), biases (hidden,) and (out,) or undefined. Equal to that composite; a backend with GEMM
// epilogues (CUDA's cuBLASLt) runs "gelu_tanh" as one autograd node whose first GEMM applies the
// activation and keeps the pre-activation, and whose backward applies the activation's derivative
// inside the second weight's input-gradient GEMM: no elementwise pass either way. Under autocast the
// float32 weights stay the node's inputs and receive float32 gradients (as linear's).
Tensor feed_forward(const Tensor& input, const Tensor& weight1, const Tensor& bias1, const Tensor& weight2,
                    const Tensor& bias2, const std::string& activation);

}  // namespace st::nn
