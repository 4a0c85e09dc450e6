#pragma once
// Pieces of a tensor along one dimension, as views recorded by one autograd node with one output
// per piece (split, chunk, tensor_split, unbind). Its backward concatenates (or stacks) the pieces'
// gradients, zeros for pieces that received none: k pieces cost one node and one kernel instead of
// k nodes each filling a full-size zero tensor, and the backward is differentiable (double backward).
#include <cstdint>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::detail {

// x narrowed along d to consecutive pieces of `lengths` that tile the dimension (each starts where the
// previous ended; they sum to x.shape()[d]). `name` names the node.
std::vector<Tensor> split_views(const Tensor& x, int64_t d, const std::vector<int64_t>& lengths, const char* name);

// select(x, d, i) for every i of dimension d, as one node.
std::vector<Tensor> unbind_views(const Tensor& x, int64_t d);

}  // namespace st::detail
