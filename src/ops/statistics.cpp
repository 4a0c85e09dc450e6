// Order statistics and counts (include/spiraltorch/statistics.h): sort once along the dim, pick the
// wanted sorted position, and gather the value from the input so the gradient reaches the element.
#include "spiraltorch/statistics.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ops/common.h"

namespace st {

namespace {

struct Sorted {
  Tensor x;        // the input, flattened when no dim was given, at least 1-D
  int64_t d = 0;   // the dim sorted along
  Tensor values;   // sorted values (detached)
  Tensor indices;  // where each came from
};

Sorted sorted_along(const Tensor& input, std::optional<int64_t> dim, const char* op) {
  Sorted s;
  s.x = dim ? input : reshape(input, {-1});
  if (s.x.dim() == 0) s.x = reshape(s.x, {1});
  s.d = dim ? wrap_dim(*dim, s.x.dim(), op) : 0;
  std::tie(s.values, s.indices) = sort(s.x.detach(), s.d);
  return s;
}

// The elements at sorted positions k (int64, size 1 along d) and their indices in x.
std::pair<Tensor, Tensor> pick(const Sorted& s, const Tensor& k, bool keepdim) {
  const Tensor idx = gather(s.indices, s.d, k);
  Tensor vals = gather(s.x, s.d, idx);
  if (!keepdim) return {squeeze(vals, s.d), squeeze(idx, s.d)};
  return {vals, idx};
}

std::pair<Tensor, Tensor> median_impl(const Tensor& input, std::optional<int64_t> dim, bool keepdim, bool ignore_nan,
                                      const char* op) {
  if (input.numel() == 0) throw IndexError(std::string(op) + ": cannot compute the median of an empty tensor");
  const Sorted s = sorted_along(input, dim, op);
  const int64_t n = s.x.shape()[s.d];
  // NaN sorts last: a line's NaN count says where its numbers end.
  const Tensor nan = is_floating(s.x.dtype()) ? sum(isnan(s.values), {s.d}, true)
                                              : zeros_like(narrow(s.values, s.d, 0, 1), Dtype::Int64);
  Tensor k;
  if (ignore_nan) {
    const Tensor valid = rsub(nan, Scalar(n));
    k = where(gt(valid, wrap_scalar(0, valid)), floor_divide(sub(valid, Scalar(1)), wrap_scalar(2, valid)),
              zeros_like(valid));
  } else {
    k = where(gt(nan, wrap_scalar(0, nan)), rsub(nan, Scalar(n)), full_like(nan, (n - 1) / 2));
  }
  auto [v, i] = pick(s, k, keepdim);
  if (!dim || input.dim() == 0) return {reshape(v, {}), reshape(i, {})};
  return {v, i};
}

}  // namespace

Tensor median(const Tensor& x) { return median_impl(x, std::nullopt, false, false, "median").first; }
std::pair<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
  return median_impl(x, dim, keepdim, false, "median");
}
Tensor nanmedian(const Tensor& x) { return median_impl(x, std::nullopt, false, true, "nanmedian").first; }
std::pair<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim) {
  return median_impl(x, dim, keepdim, true, "nanmedian");
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  const Sorted s = sorted_along(x, dim, "kthvalue");
  const int64_t n = s.x.shape()[s.d];
  if (k < 1 || k > n) {
    throw IndexError("kthvalue: k=" + std::to_string(k) + " is out of range for dimension " + std::to_string(dim) +
                     " of size " + std::to_string(n));
  }
  auto [v, i] = pick(s, full_like(narrow(s.indices, s.d, 0, 1), k - 1), keepdim);
  if (x.dim() == 0) return {reshape(v, {}), reshape(i, {})};
  return {v, i};
}

std::pair<Tensor, Tensor> mode(const Tensor& x, int64_t dim, bool keepdim) {
  const Sorted s = sorted_along(x, dim, "mode");
  if (s.x.shape()[s.d] == 0) throw IndexError("mode: dimension " + std::to_string(dim) + " is empty");
  const Tensor sv = movedim(s.values, {s.d}, {-1}), si = movedim(s.indices, {s.d}, {-1});
  const int64_t n = sv.shape().back();
  // Runs of equal values in the sorted line: the run's length so far at each position is the position
  // minus the run's start (a running maximum of the start positions), so memory stays O(n).
  const Tensor pos = expand(arange(0, static_cast<double>(n), 1.0, Dtype::Int64, x.device()), sv.shape());
  Shape first_shape = sv.shape();
  first_shape.back() = 1;
  Tensor starts = ones(first_shape, Dtype::Bool, x.device());
  if (n > 1) starts = cat({starts, ne(narrow(sv, -1, 1, n - 1), narrow(sv, -1, 0, n - 1))}, -1);
  const Tensor run_start = cummax(where(starts, pos, zeros_like(pos)), -1).first;
  // The first longest run ends at the first maximum: sorted ascending, the smallest most frequent value.
  const Tensor end = argmax(sub(pos, run_start), -1, true);
  const Tensor value = gather(sv, -1, end);
  const Tensor last = amax(where(eq(sv, value), si, full_like(si, -1)), {-1}, true);
  Tensor vals = movedim(gather(movedim(s.x, {s.d}, {-1}), -1, last), {-1}, {s.d});
  Tensor idx = movedim(last, {-1}, {s.d});
  if (!keepdim || x.dim() == 0) return {squeeze(vals, s.d), squeeze(idx, s.d)};
  return {vals, idx};
}

std::pair<Tensor, Tensor> aminmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (x.numel() == 0) throw ValueError("aminmax: cannot compute on an empty tensor");
  if (!dim) {
    if (!keepdim) return {amin(x), amax(x)};
    Dims all;
    for (int64_t i = 0; i < x.dim(); ++i) all.push_back(i);
    return {amin(x, all, true), amax(x, all, true)};
  }
  const int64_t d = wrap_dim(*dim, x.dim(), "aminmax");
  return {amin(x, {d}, keepdim), amax(x, {d}, keepdim)};
}

Tensor count_nonzero(const Tensor& x, const Dims& dims) {
  const Tensor nz = cast(ne(x, wrap_scalar(0, x)), Dtype::Int64);
  return dims.empty() ? sum(nz) : sum(nz, dims);
}

Tensor quantile(const Tensor& x, const std::vector<double>& q, std::optional<int64_t> dim, bool keepdim,
                QuantileInterpolation interpolation, bool ignore_nan) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  if (x.dtype() != Dtype::Float32 && x.dtype() != Dtype::Float64) {
    throw DtypeError(std::string(op) + ": input must be float32 or float64, got " + dtype_name(x.dtype()));
  }
  for (const double v : q) {
    if (!(v >= 0 && v <= 1))
      throw ValueError(std::string(op) + ": q values must be in the range [0, 1], got " + std::to_string(v));
  }
  if (x.numel() == 0) throw IndexError(std::string(op) + ": input tensor must be non-empty");
  const Sorted s = sorted_along(x, dim, op);
  const int64_t n = s.x.shape()[s.d];
  const Tensor nan = sum(isnan(s.values), {s.d}, true);  // int64, size 1 along d
  const Tensor valid = cast(rsub(nan, Scalar(n)), x.dtype());
  const Tensor last = clamp(sub(valid, Scalar(1)), Scalar(0), std::nullopt);
  std::vector<Tensor> outs;
  for (const double qq : q) {
    Tensor rank = mul(last, qq);
    if (interpolation == QuantileInterpolation::Lower) rank = floor(rank);
    if (interpolation == QuantileInterpolation::Higher) rank = ceil(rank);
    if (interpolation == QuantileInterpolation::Nearest) rank = round(rank);  // half to even, as torch
    const Tensor lo = floor(rank);
    const Tensor hi = minimum(add(lo, Scalar(1)), last);
    const Tensor vlo = gather(s.x, s.d, gather(s.indices, s.d, cast(lo, Dtype::Int64)));
    const Tensor vhi = gather(s.x, s.d, gather(s.indices, s.d, cast(hi, Dtype::Int64)));
    const Tensor w = interpolation == QuantileInterpolation::Midpoint
                         ? where(gt(rank, lo), full_like(lo, 0.5), zeros_like(lo))
                         : sub(rank, lo);
    Tensor v = add(vlo, mul(sub(vhi, vlo), w));
    const Tensor nan_value = full_like(v, std::nan(""));
    v = ignore_nan ? where(gt(valid, wrap_scalar(0, valid)), v, nan_value)
                   : where(gt(nan, wrap_scalar(0, nan)), nan_value, v);
    if (!dim) {
      v = keepdim ? reshape(v, Shape(static_cast<size_t>(x.dim()), 1)) : reshape(v, {});
    } else if (!keepdim) {
      v = squeeze(v, s.d);
    }
    outs.push_back(v);
  }
  return stack(outs, 0);
}

Tensor cov(const Tensor& input, int64_t correction, const Tensor& fweights, const Tensor& aweights) {
  if (input.dim() > 2) throw ShapeError("cov: expected a 1-D or 2-D input, got shape " + shape_str(input.shape()));
  Tensor x = is_floating(input.dtype()) ? input : cast(input, Dtype::Float32);
  if (x.dim() < 2) x = reshape(x, {1, -1});
  const int64_t n = x.shape()[1];
  const auto check_weights = [n](const Tensor& w, const char* name) {
    if (w.dim() > 1 || w.numel() != n) {
      throw ShapeError(std::string("cov: ") + name + " must be 1-D with " + std::to_string(n) + " entries, got shape " +
                       shape_str(w.shape()));
    }
    if (any(lt(w, wrap_scalar(0, w))).item() != 0)
      throw ValueError(std::string("cov: ") + name + " cannot be negative");
  };
  Tensor w, aw;
  if (fweights.defined()) {
    if (is_floating(fweights.dtype())) {
      throw DtypeError(std::string("cov: fweights must be integers, got ") + dtype_name(fweights.dtype()));
    }
    check_weights(fweights, "fweights");
    w = cast(reshape(fweights, {-1}), x.dtype());
  }
  if (aweights.defined()) {
    if (!is_floating(aweights.dtype())) {
      throw DtypeError(std::string("cov: aweights must be floating point, got ") + dtype_name(aweights.dtype()));
    }
    check_weights(aweights, "aweights");
    aw = cast(reshape(aweights, {-1}), x.dtype());
    w = w.defined() ? mul(w, aw) : aw;
  }
  Tensor norm, c;
  if (!w.defined()) {
    const Tensor xm = sub(x, mean(x, {1}, true));
    norm = sub(scalar_tensor(static_cast<double>(n), x.dtype(), x.device()), Scalar(static_cast<double>(correction)));
    c = matmul(xm, t(xm));
  } else {
    const Tensor w_sum = sum(w);
    const Tensor xm = sub(x, div(sum(mul(x, w), {1}, true), w_sum));
    norm = aw.defined() ? sub(w_sum, div(mul(sum(mul(w, aw)), Scalar(static_cast<double>(correction))), w_sum))
                        : sub(w_sum, Scalar(static_cast<double>(correction)));
    c = matmul(mul(xm, w), t(xm));
  }
  return squeeze(div(c, clamp(norm, Scalar(0), std::nullopt)));
}

Tensor corrcoef(const Tensor& x) {
  const Tensor c = cov(x);
  if (c.dim() == 0) return div(c, c);
  // The diagonal: every (rows + 1)-th element of the flattened matrix.
  const int64_t r = c.shape()[0];
  const Tensor sd = sqrt(slice(reshape(c, {-1}), 0, 0, r * r, r + 1));
  return clamp(div(div(c, reshape(sd, {-1, 1})), reshape(sd, {1, -1})), Scalar(-1), Scalar(1));
}

Tensor bincount(const Tensor& x, const Tensor& weights, int64_t minlength) {
  if (x.dim() != 1) throw ShapeError("bincount: input must be 1-D, got shape " + shape_str(x.shape()));
  if (!is_integral(x.dtype()) || x.dtype() == Dtype::Bool) {
    throw DtypeError(std::string("bincount: input must be an integer tensor, got ") + dtype_name(x.dtype()));
  }
  if (minlength < 0) throw ValueError("bincount: minlength must be non-negative, got " + std::to_string(minlength));
  const int64_t n = x.shape()[0];
  const Tensor idx = cast(x, Dtype::Int64);
  int64_t size = minlength;
  if (n > 0) {
    // The result's length depends on the data: one read of the range.
    const auto [lo, hi] = detail::index_range(idx);
    if (lo < 0) throw ValueError("bincount: input must be non-negative, got a minimum of " + std::to_string(lo));
    size = std::max(size, hi + 1);
  }
  Tensor src;
  if (!weights.defined()) {
    src = ones({n}, Dtype::Int64, x.device());
  } else {
    if (weights.shape() != Shape{n}) {
      throw ShapeError("bincount: weights " + shape_str(weights.shape()) + " must match input (" + std::to_string(n) +
                       ",)");
    }
    const bool keep = weights.dtype() == Dtype::Float32 || weights.dtype() == Dtype::Float64;
    src = keep ? weights : cast(weights, Dtype::Float64);
  }
  return scatter_add(zeros({size}, src.dtype(), x.device()), 0, idx, src);
}

Tensor histc(const Tensor& x, int64_t bins, double min, double max) {
  if (!is_floating(x.dtype())) {
    throw DtypeError(std::string("histc: expects a floating-point tensor, got ") + dtype_name(x.dtype()));
  }
  if (bins <= 0) throw ValueError("histc: bins must be positive, got " + std::to_string(bins));
  if (min > max) {
    throw ValueError("histc: max (" + std::to_string(max) + ") must be larger than or equal to min (" +
                     std::to_string(min) + ")");
  }
  const Dtype compute = x.device().has_float64() ? Dtype::Float64 : Dtype::Float32;
  const Tensor flat = cast(reshape(x.detach(), {-1}), compute);
  double lo = min, hi = max;
  if (lo == hi && flat.numel() > 0) {
    lo = amin(flat).item();
    hi = amax(flat).item();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    throw ValueError("histc: range of [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is not finite");
  }
  const Tensor inside =
      masked_select(flat, logical_and(ge(flat, wrap_scalar(lo, flat)), le(flat, wrap_scalar(hi, flat))));
  const Tensor bin =
      clamp(cast(floor(mul(sub(inside, Scalar(lo)), static_cast<double>(bins) / (hi - lo))), Dtype::Int64),
            Scalar(int64_t{0}), Scalar(bins - 1));
  const Tensor counts =
      scatter_add(zeros({bins}, compute, x.device()), 0, bin, ones({inside.numel()}, compute, x.device()));
  return cast(counts, x.dtype());
}

}  // namespace st
