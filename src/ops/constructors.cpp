// Tensors built from other tensors or from sizes (include/spiraltorch/constructors.h).
#include "spiraltorch/constructors.h"

#include <string>
#include <vector>

#include "ops/common.h"

namespace st {

Tensor block_diag(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) return zeros({1, 0});
  std::vector<Tensor> mats;
  Dtype dt = tensors[0].dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() > 2) {
      throw ShapeError("block_diag: input " + std::to_string(i) + " has " + std::to_string(t.dim()) +
                       " dimensions, expected 2 or fewer");
    }
    mats.push_back(t.dim() < 2 ? reshape(t, {1, -1}) : t);
    dt = promote_types(dt, t.dtype());
  }
  int64_t cols = 0;
  for (const Tensor& m : mats) cols += m.shape()[1];
  const Device dev = mats[0].device();
  std::vector<Tensor> rows;
  int64_t left = 0;
  for (const Tensor& m : mats) {
    const int64_t r = m.shape()[0], c = m.shape()[1];
    rows.push_back(cat({zeros({r, left}, dt, dev), cast(m, dt), zeros({r, cols - left - c}, dt, dev)}, 1));
    left += c;
  }
  return cat(rows, 0);
}

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) throw ValueError("cartesian_prod: expects at least one tensor");
  for (const Tensor& t : tensors) {
    if (t.dim() != 1) throw ShapeError("cartesian_prod: expects 1-D tensors, got shape " + shape_str(t.shape()));
  }
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> cols;
  for (const Tensor& g : meshgrid(tensors, "ij")) cols.push_back(reshape(g, {-1}));
  return stack(cols, 1);
}

Tensor combinations(const Tensor& x, int64_t r, bool with_replacement) {
  if (x.dim() != 1) throw ShapeError("combinations: expects a 1-D tensor, got shape " + shape_str(x.shape()));
  if (r < 0) throw ValueError("combinations: r must be non-negative, got " + std::to_string(r));
  if (r == 0) return zeros({0}, x.dtype(), x.device());
  // The index tuples in itertools order: the next tuple raises the last index that can still grow.
  const int64_t n = x.shape()[0];
  std::vector<std::vector<int64_t>> cols(static_cast<size_t>(r));
  std::vector<int64_t> idx(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j) idx[j] = with_replacement ? 0 : j;
  const auto limit = [&](int64_t j) { return with_replacement ? n - 1 : n - r + j; };
  bool more = with_replacement ? n > 0 : r <= n;
  while (more) {
    for (int64_t j = 0; j < r; ++j) cols[j].push_back(idx[j]);
    int64_t j = r - 1;
    while (j >= 0 && idx[j] == limit(j)) --j;
    more = j >= 0;
    if (more) {
      ++idx[j];
      for (int64_t k = j + 1; k < r; ++k) idx[k] = with_replacement ? idx[j] : idx[k - 1] + 1;
    }
  }
  if (cols[0].empty()) return zeros({0, r}, x.dtype(), x.device());
  std::vector<Tensor> picked;
  for (const auto& c : cols) {
    const Tensor index = to_device(Tensor::from_vector<int64_t>(c, {static_cast<int64_t>(c.size())}), x.device());
    picked.push_back(index_select(x, 0, index));
  }
  return stack(picked, 1);
}

namespace {

Tensor tri_indices(int64_t row, int64_t col, int64_t offset, bool upper, Dtype dtype, Device device, const char* op) {
  if (row < 0 || col < 0) {
    throw ValueError(std::string(op) + ": row and col must be non-negative, got row=" + std::to_string(row) +
                     ", col=" + std::to_string(col));
  }
  std::vector<int64_t> rows, cols;
  for (int64_t i = 0; i < row; ++i) {
    for (int64_t j = 0; j < col; ++j) {
      if (upper ? j - i >= offset : j - i <= offset) {
        rows.push_back(i);
        cols.push_back(j);
      }
    }
  }
  const int64_t n = static_cast<int64_t>(rows.size());
  rows.insert(rows.end(), cols.begin(), cols.end());
  return to_device(cast(Tensor::from_vector<int64_t>(rows, {2, n}), dtype), device);
}

}  // namespace

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, Dtype dtype, Device device) {
  return tri_indices(row, col, offset, false, dtype, device, "tril_indices");
}

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, Dtype dtype, Device device) {
  return tri_indices(row, col, offset, true, dtype, device, "triu_indices");
}

Tensor logspace(double start, double end, int64_t steps, double base, Dtype dtype, Device device) {
  if (steps < 0) throw ValueError("logspace: steps must be non-negative, got " + std::to_string(steps));
  const Tensor e = linspace(start, end, steps, Dtype::Float64);
  return to_device(cast(rpow(e, Scalar(base)), dtype), device);
}

}  // namespace st
