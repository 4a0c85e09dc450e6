// Products of torch's surface composed from the native ops (gradients and every device come with
// them): outer, kron, trace, cross, tensordot.
#include <string>
#include <vector>

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

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  const int64_t most = std::min(a.dim(), b.dim());
  if (dims < 0 || dims > most) {
    throw ValueError("tensordot: dims=" + std::to_string(dims) + " must be between 0 and " + std::to_string(most) +
                     " for shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
  }
  Dims da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(a.dim() - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db);
}

Tensor tensordot(const Tensor& a, const Tensor& b, const Dims& dims_a, const Dims& dims_b) {
  if (dims_a.size() != dims_b.size()) {
    throw ValueError("tensordot: " + std::to_string(dims_a.size()) + " dims of a paired with " +
                     std::to_string(dims_b.size()) + " dims of b");
  }
  // Contracted dims (wrapped, each once) and the free ones left in order.
  const auto wrap_all = [](const Dims& d, const Tensor& t) {
    Dims out;
    for (const int64_t v : d) {
      const int64_t w = wrap_existing_dim(v, t.dim(), "tensordot");
      if (std::find(out.begin(), out.end(), w) != out.end()) {
        throw ValueError("tensordot: dimension " + std::to_string(v) + " is contracted twice");
      }
      out.push_back(w);
    }
    return out;
  };
  const Dims ca = wrap_all(dims_a, a), cb = wrap_all(dims_b, b);
  int64_t k = 1;
  for (size_t i = 0; i < ca.size(); ++i) {
    if (a.shape()[ca[i]] != b.shape()[cb[i]]) {
      throw ShapeError("tensordot: dim " + std::to_string(ca[i]) + " of a " + shape_str(a.shape()) + " has size " +
                       std::to_string(a.shape()[ca[i]]) + " but dim " + std::to_string(cb[i]) + " of b " +
                       shape_str(b.shape()) + " has size " + std::to_string(b.shape()[cb[i]]));
    }
    k *= a.shape()[ca[i]];
  }
  const auto free_of = [](const Dims& c, int64_t nd) {
    Dims out;
    for (int64_t d = 0; d < nd; ++d) {
      if (std::find(c.begin(), c.end(), d) == c.end()) out.push_back(d);
    }
    return out;
  };
  const Dims fa = free_of(ca, a.dim()), fb = free_of(cb, b.dim());
  Shape out_shape;
  int64_t ma = 1, nb = 1;
  for (const int64_t d : fa) ma *= a.shape()[d], out_shape.push_back(a.shape()[d]);
  for (const int64_t d : fb) nb *= b.shape()[d], out_shape.push_back(b.shape()[d]);
  Dims order_a = fa, order_b = cb;
  order_a.insert(order_a.end(), ca.begin(), ca.end());
  order_b.insert(order_b.end(), fb.begin(), fb.end());
  const Tensor mat_a = reshape(permute(a, order_a), {ma, k});
  const Tensor mat_b = reshape(permute(b, order_b), {k, nb});
  return reshape(matmul(mat_a, mat_b), out_shape);
}

}  // namespace st
