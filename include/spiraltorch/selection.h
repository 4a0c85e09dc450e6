#pragma once
// Selections and placements along dims built from gather, scatter_add and index_select, as torch's
// namesakes (src/ops/selection.cpp; index_add, which backs index_select's gradient, in
// src/ops/indexing.cpp): nonzero, index_add, repeat_interleave, diag, unique. Each is
// differentiable where torch's is (through the ops it is built from) and runs on every device.
#include <optional>

#include "spiraltorch/ops.h"

namespace st {

// The int64 coordinates (n, ndim) of the nonzero elements of x, row-major (n rows of 0 columns for a
// 0-d x).
Tensor nonzero(const Tensor& x);
// x with alpha * source's slices added at `index` (1-D) along dim; repeated positions accumulate
// in index order. Without gradients, the backend's index_add kernel adds whole slices at once.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1.0);
// Each slice of x along dim (of the flattened x when no dim) repeated `repeats` times: one count for
// all, or one per slice (a 1-D integer tensor, read on the host: the result's size depends on it).
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim = {});
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim = {});
// A 1-D x placed on the `diagonal`-th diagonal of a square matrix, or that diagonal of a 2-D x.
Tensor diag(const Tensor& x, int64_t diagonal = 0);
// The distinct values of the flattened x in ascending order, with each element's index into them
// (x's shape) and how often each occurs (both int64).
struct UniqueResult {
  Tensor values, inverse, counts;
};
UniqueResult unique(const Tensor& x);

}  // namespace st
