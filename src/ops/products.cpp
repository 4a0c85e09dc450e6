// Products of torch's surface composed from the native ops (gradients and every device come with
// them): outer, kron, trace, cross.
#include <string>

#include "ops/common.h"

namespace st {

Tensor outer(const Tensor& a, const Tensor& b) {
  if (a.dim() != 1 || b.dim() != 1) {
    throw ShapeError("outer: expected 1-D vectors, got shapes " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()));
  }
  return mul(reshape(a, {-1, 1}), reshape(b, {1, -1}));
}

Tensor kron(const Tensor& a, const Tensor& b) {
  // Interleave the dims: a as (s0, 1, s1, 1, ...) times b as (1, t0, 1, t1, ...), then merge each pair.
  const size_t nd = static_cast<size_t>(std::max(a.dim(), b.dim()));
  Shape as(nd - a.dim(), 1), bs(nd - b.dim(), 1);
  as.insert(as.end(), a.shape().begin(), a.shape().end());
  bs.insert(bs.end(), b.shape().begin(), b.shape().end());
  Shape a_view, b_view, out_shape;
  for (size_t i = 0; i < nd; ++i) {
    a_view.insert(a_view.end(), {as[i], 1});
    b_view.insert(b_view.end(), {1, bs[i]});
    out_shape.push_back(as[i] * bs[i]);
  }
  return reshape(mul(reshape(a, a_view), reshape(b, b_view)), out_shape);
}

Tensor trace(const Tensor& x) {
  if (x.dim() != 2) throw ShapeError("trace: expected a 2-D matrix, got shape " + shape_str(x.shape()));
  // The main diagonal is a strided view of the flattened matrix: every (cols + 1)-th element.
  const int64_t n = std::min(x.shape()[0], x.shape()[1]);
  if (n == 0) return sum(reshape(x, {-1}));
  return sum(slice(reshape(x, {-1}), 0, 0, (n - 1) * (x.shape()[1] + 1) + 1, x.shape()[1] + 1));
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), "cross");
  const Tensor x = expand(a, shape), y = expand(b, shape);
  int64_t d = 0;
  if (!dim) {
    const auto it = std::find(shape.begin(), shape.end(), 3);
    if (it == shape.end()) throw ShapeError("cross: no dimension of size 3 in shape " + shape_str(shape));
    d = it - shape.begin();
  } else {
    d = wrap_existing_dim(*dim, static_cast<int64_t>(shape.size()), "cross");
    if (shape[d] != 3) {
      throw ShapeError("cross: dimension " + std::to_string(*dim) + " of shape " + shape_str(shape) + " has size " +
                       std::to_string(shape[d]) + ", expected 3");
    }
  }
  const auto part = [d](const Tensor& t, int64_t i) { return narrow(t, d, i, 1); };
  return cat({sub(mul(part(x, 1), part(y, 2)), mul(part(x, 2), part(y, 1))),
              sub(mul(part(x, 2), part(y, 0)), mul(part(x, 0), part(y, 2))),
              sub(mul(part(x, 0), part(y, 1)), mul(part(x, 1), part(y, 0)))},
             d);
}

}  // namespace st
