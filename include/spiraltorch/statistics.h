#pragma once
// Order statistics and counts along a dim, as torch's namesakes (src/ops/statistics.cpp). The values
// carry the gradient to the chosen elements; every function runs on every device through the ops it
// is built from (sort, gather, cummax, reductions).
#include <optional>
#include <utility>
#include <vector>

#include "spiraltorch/ops.h"

namespace st {

// The lower median (sorted position (n - 1) / 2; NaN when the line has a NaN) of all elements.
Tensor median(const Tensor& x);
// The lower median along dim and the index it came from.
std::pair<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim = false);
// As median with NaNs left out (NaN only where every element is NaN).
Tensor nanmedian(const Tensor& x);
std::pair<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim = false);
// The k-th smallest element along dim (k counts from 1) and its index.
std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim = -1, bool keepdim = false);
// The most frequent value along dim (the smallest among equally frequent ones) and the index of its
// last occurrence.
std::pair<Tensor, Tensor> mode(const Tensor& x, int64_t dim = -1, bool keepdim = false);
// (min, max) of all elements or along dim.
std::pair<Tensor, Tensor> aminmax(const Tensor& x, std::optional<int64_t> dim = {}, bool keepdim = false);
// The number of nonzero elements over dims (all when empty), int64.
Tensor count_nonzero(const Tensor& x, const Dims& dims = {});
// How quantile() reads between two sorted neighbours.
enum class QuantileInterpolation { Linear, Lower, Higher, Midpoint, Nearest };
// The q-quantiles (each q in [0, 1]) of a float32/float64 x, of all elements or along dim: the value at
// rank q (n - 1) in sorted order, interpolated; results stacked along a new first dim, one per q
// (reduced dims kept as size 1 with keepdim). NaN where the line has a NaN, or with ignore_nan (torch's
// nanquantile) where every element is NaN.
Tensor quantile(const Tensor& x, const std::vector<double>& q, std::optional<int64_t> dim = {}, bool keepdim = false,
                QuantileInterpolation interpolation = QuantileInterpolation::Linear, bool ignore_nan = false);
// The covariance matrix of the rows (variables) of a 1-D or 2-D x over its columns (observations), with
// optional integer frequency weights and floating observation weights (each undefined when absent).
Tensor cov(const Tensor& x, int64_t correction = 1, const Tensor& fweights = {}, const Tensor& aweights = {});
// Pearson correlation coefficients between the rows of x, clipped to [-1, 1].
Tensor corrcoef(const Tensor& x);
// How often each value 0..max occurs in a 1-D non-negative integer x (summing `weights` instead of ones
// when defined; float32/float64 weights keep their dtype, others sum in float64), at least minlength long.
Tensor bincount(const Tensor& x, const Tensor& weights = {}, int64_t minlength = 0);
// Counts of the elements of a floating x in `bins` equal-width bins over [min, max] (the data's range
// when min == max; elements outside are ignored), in x's dtype.
Tensor histc(const Tensor& x, int64_t bins = 100, double min = 0, double max = 0);

}  // namespace st
