// Selections and placements (include/spiraltorch/selection.h), composed of gather, scatter_add,
// index_select, masked_select, sort and cumsum, so gradients and every device come with them.
#include "spiraltorch/selection.h"

#include <string>

#include "ops/common.h"

namespace st {

Tensor nonzero(const Tensor& x) {
  const Tensor flat = ne(reshape(x, {-1}), wrap_scalar(0, x));
  const Tensor pos = masked_select(arange(0, static_cast<double>(flat.numel()), 1.0, Dtype::Int64, x.device()), flat);
  if (x.dim() == 0) return narrow(reshape(pos, {-1, 1}), 1, 0, 0).clone();  // as torch: (k, 0)
  // Row-major coordinates from the flat positions, last dim first.
  std::vector<Tensor> coords(static_cast<size_t>(x.dim()));
  Tensor rest = pos;
  for (int64_t d = x.dim() - 1; d >= 0; --d) {
    const Scalar size(x.shape()[d]);
    coords[static_cast<size_t>(d)] = remainder(rest, wrap_scalar(size, rest));
    rest = floor_divide(rest, wrap_scalar(size, rest));
  }
  return stack(coords, 1);
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim) {
  const Tensor xs = dim ? x : reshape(x, {-1});
  const int64_t d = dim ? wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  const int64_t n = xs.dim() == 0 ? 1 : xs.shape()[d];
  std::vector<int64_t> counts =
      cast(to_device(reshape(repeats, {-1}), Device{}), Dtype::Int64).contiguous().to_vector<int64_t>();
  if (counts.size() == 1 && n != 1) counts.assign(static_cast<size_t>(n), counts[0]);
  bool negative = false;
  for (const int64_t c : counts) negative = negative || c < 0;
  if (static_cast<int64_t>(counts.size()) != n || negative) {
    throw ValueError("repeat_interleave: repeats must be non-negative, one per element (" + std::to_string(n) +
                     "), got " + std::to_string(counts.size()) + " values");
  }
  std::vector<int64_t> index;
  for (int64_t i = 0; i < n; ++i) index.insert(index.end(), static_cast<size_t>(counts[static_cast<size_t>(i)]), i);
  const Tensor idx = to_device(Tensor::from_vector<int64_t>(index, {static_cast<int64_t>(index.size())}), x.device());
  return index_select(xs, d, idx);
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  return repeat_interleave(x, Tensor::from_vector<int64_t>({repeats}, {1}), dim);
}

Tensor diag(const Tensor& x, int64_t k) {
  if (x.dim() == 1) {
    const int64_t n = x.shape()[0], m = n + std::abs(k);
    // Element i goes to row i + max(-k, 0), column i + max(k, 0) of the flattened (m, m) matrix.
    const int64_t first = std::max<int64_t>(-k, 0) * m + std::max<int64_t>(k, 0);
    const Tensor pos =
        add(mul(arange(0, static_cast<double>(n), 1.0, Dtype::Int64, x.device()), Scalar(m + 1)), Scalar(first));
    return reshape(scatter_add(zeros({m * m}, x.dtype(), x.device()), 0, pos, x), {m, m});
  }
  if (x.dim() == 2) {
    const int64_t r = x.shape()[0], c = x.shape()[1];
    const int64_t lo = std::max<int64_t>(-k, 0), hi = (k < c && -k < r) ? std::min(r, c - k) : lo;
    const int64_t len = std::max<int64_t>(hi - lo, 0);
    const Tensor flat = reshape(x, {-1});
    if (len == 0) return narrow(flat, 0, 0, 0).clone();
    // The diagonal is every (c + 1)-th element of the flattened matrix from (lo, lo + k).
    const int64_t start = lo * c + lo + k;
    return slice(flat, 0, start, start + (len - 1) * (c + 1) + 1, c + 1).clone();  // a copy, as torch.diag
  }
  throw ShapeError("diag: expected a 1-D or 2-D tensor, got " + std::to_string(x.dim()) + "-D");
}

UniqueResult unique(const Tensor& x) {
  const Tensor flat = reshape(x.detach(), {-1});
  auto [values, order] = sort(flat);
  const int64_t n = flat.numel();
  UniqueResult r;
  if (n == 0) {
    r.values = values;
    r.inverse = reshape(zeros({0}, Dtype::Int64, x.device()), x.shape());
    r.counts = zeros({0}, Dtype::Int64, x.device());
    return r;
  }
  // A value starts a group where it differs from its sorted predecessor.
  Tensor first = ones({1}, Dtype::Bool, x.device());
  if (n > 1) first = cat({first, ne(narrow(values, 0, 1, n - 1), narrow(values, 0, 0, n - 1))}, 0);
  r.values = masked_select(values, first);
  const Tensor group = sub(cumsum(first, 0), Scalar(int64_t{1}));
  r.inverse = reshape(scatter_add(zeros({n}, Dtype::Int64, x.device()), 0, order, group), x.shape());
  const Tensor starts = masked_select(arange(0, static_cast<double>(n), 1.0, Dtype::Int64, x.device()), first);
  const int64_t u = starts.numel();
  const Tensor ends = cat({narrow(starts, 0, 1, u - 1), full({1}, Scalar(n), Dtype::Int64, x.device())}, 0);
  r.counts = sub(ends, starts);
  return r;
}

}  // namespace st
