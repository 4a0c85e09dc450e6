#pragma once
// PyTorch's embedding_bag: reductions over bags of embedding rows (recommenders, bag-of-words).
#include <optional>
#include <string>

#include "spiraltorch/tensor.h"

namespace st::nn {

// Bags of rows of weight (num_embeddings, dim), reduced by mode "sum", "mean" or "max" to
// (bags, dim). input is 2-D (bags, length) with offsets undefined, or 1-D with 1-D offsets where
// each bag starts (offsets[0] = 0, non-decreasing; with include_last_offset the last one equals the
// number of indices and is not a bag). per_sample_weights (input's shape, mode "sum" only) scale the
// rows; entries equal to padding_idx are left out of their bag (and of a mean's count). Empty bags
// give zeros. Gradients flow to weight and per_sample_weights; indices and offsets are read on the host.
Tensor embedding_bag(const Tensor& weight, const Tensor& input, const Tensor& offsets = {},
                     const std::string& mode = "mean", const Tensor& per_sample_weights = {},
                     bool include_last_offset = false, std::optional<int64_t> padding_idx = {});

}  // namespace st::nn
