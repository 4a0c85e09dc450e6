#pragma once
// Tensors built from other tensors or from sizes, as torch's namesakes (src/ops/constructors.cpp):
// block_diag, cartesian_prod and combinations are composites of cat/stack/index_select (gradients and
// every device come with them); the index sets are counted on the host (a handful of values).
#include <optional>
#include <vector>

#include "spiraltorch/ops.h"

namespace st {

// A block-diagonal matrix with the given 0-, 1- or 2-D tensors on its diagonal (0-D and 1-D as one
// row), in their promoted dtype; no tensors give a float32 (1, 0).
Tensor block_diag(const std::vector<Tensor>& tensors);
// Every combination of the elements of the 1-D inputs, one per row (one input: itself).
Tensor cartesian_prod(const std::vector<Tensor>& tensors);
// The length-r combinations of a 1-D tensor's elements (with or without replacement), one per row,
// in itertools order; r = 0 gives an empty 1-D tensor.
Tensor combinations(const Tensor& x, int64_t r = 2, bool with_replacement = false);
// The (2, N) row-major coordinates of the lower (upper) triangle of a row x col matrix, on and below
// (above) diagonal `offset`.
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, Dtype dtype = Dtype::Int64, Device device = {});
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, Dtype dtype = Dtype::Int64, Device device = {});
// `steps` values base ** e for exponents evenly spaced from start to end (computed in float64).
Tensor logspace(double start, double end, int64_t steps, double base = 10.0, Dtype dtype = Dtype::Float32,
                Device device = {});

}  // namespace st
