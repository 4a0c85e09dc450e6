#include <algorithm>
#include <numeric>

#include "ops/common.h"

namespace st {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n) {
    throw IndexError(std::string(op) + ": dimension " + std::to_string(dim) + " is out of range for a tensor of " +
                     std::to_string(ndim) + " dimensions");
  }
  return dim < 0 ? dim + n : dim;
}

int64_t wrap_existing_dim(int64_t dim, int64_t ndim, const char* op) {
  if (ndim == 0) {
    throw IndexError(std::string(op) + ": dimension " + std::to_string(dim) +
                     " is out of range: the tensor is 0-dimensional (it has no dimensions)");
  }
  return wrap_dim(dim, ndim, op);
}

namespace {

// A view of x with new geometry that inherits x's autograd (the backward maps the
// view's gradient back to x's shape).
Tensor make_view(const Tensor& x, const Shape& shape, const Shape& strides, int64_t offset, const char* name,
                 std::function<Tensor(const Tensor&)> back) {
  Tensor v = Tensor::from_storage(x.storage(), shape, strides, offset, x.dtype());
  const bool nested = x.impl()->autograd && x.impl()->autograd->view_base;
  if (needs_grad({&x})) {
    record(v, name, {x}, [back = std::move(back)](const Tensor& g) -> std::vector<Tensor> { return {back(g)}; });
  }
  // Always the root tensor, so an in-place write through a view of a view rewires it. Under
  // grad mode views of tensors without history keep their root too: writing a value that has
  // history through such a view gives the root that history (x[1:3] = w * 2).
  if (nested || grad_enabled()) v.autograd_meta().view_base = nested ? x.impl()->autograd->view_base : x.impl_ptr();
  return v;
}

Shape infer_shape(const Shape& requested, int64_t numel, const char* op) {
  Shape shape = requested;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw ShapeError(std::string(op) + ": only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      throw ShapeError(std::string(op) + ": invalid shape dimension " + std::to_string(shape[i]));
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) {
      throw ShapeError(std::string(op) + ": shape " + shape_str(requested) + " is invalid for input of size " +
                       std::to_string(numel));
    }
    shape[infer] = numel / known;
  } else if (known != numel) {
    throw ShapeError(std::string(op) + ": shape " + shape_str(requested) + " is invalid for input of size " +
                     std::to_string(numel));
  }
  return shape;
}

// Strides for viewing x's memory with `shape`, or nullopt when a copy is needed.
std::optional<Shape> view_strides(const Tensor& x, const Shape& shape) {
  if (x.is_contiguous()) return contiguous_strides(shape);
  if (x.numel() == 0) return contiguous_strides(shape);
  // Group old dims into contiguous chunks and map new dims onto them (PyTorch's rule).
  const Shape& os = x.shape();
  const Shape& ost = x.strides();
  Shape ns(shape.size());
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = ost.empty() ? 1 : ost.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(os.size()) - 1; d >= 0; --d) {
    tensor_numel *= os[d];
    if (d == 0 || (os[d - 1] != 1 && ost[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        ns[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = ost[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return ns;
}

}  // namespace

Tensor view(const Tensor& x, const Shape& requested) {
  const Shape shape = infer_shape(requested, x.numel(), "view");
  const auto strides = view_strides(x, shape);
  if (!strides) {
    throw ShapeError("view: size " + shape_str(shape) + " is not compatible with the input's strides " +
                     shape_str(x.strides()) + "; use reshape");
  }
  const Shape in_shape = x.shape();
  return make_view(x, shape, *strides, x.offset(), "ViewBackward",
                   [in_shape](const Tensor& g) { return reshape(g, in_shape); });
}

Tensor reshape(const Tensor& x, const Shape& requested) {
  const Shape shape = infer_shape(requested, x.numel(), "reshape");
  if (shape == x.shape()) return x;
  if (view_strides(x, shape)) return view(x, shape);
  return view(x.clone(), shape);
}

Tensor permute(const Tensor& x, const Dims& order) {
  const int64_t n = x.dim();
  if (static_cast<int64_t>(order.size()) != n) {
    throw ShapeError("permute: got " + std::to_string(order.size()) + " dims for a tensor of " + std::to_string(n) +
                     " dimensions");
  }
  Shape shape(n), strides(n);
  Dims inverse(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = wrap_dim(order[i], n, "permute");
    if (inverse[d] != -1) throw ShapeError("permute: repeated dim " + std::to_string(d));
    inverse[d] = i;
    shape[i] = x.shape()[d];
    strides[i] = x.strides()[d];
  }
  return make_view(x, shape, strides, x.offset(), "PermuteBackward",
                   [inverse](const Tensor& g) { return permute(g, inverse); });
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  const int64_t n = x.dim();
  if (n == 0) return x;
  d0 = wrap_dim(d0, n, "transpose");
  d1 = wrap_dim(d1, n, "transpose");
  Dims order(n);
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[d0], order[d1]);
  return permute(x, order);
}

Tensor t(const Tensor& x) {
  Dims order(x.dim());
  std::iota(order.rbegin(), order.rend(), 0);
  return permute(x, order);
}

namespace {

// The backward of slice/select under create_graph: `g` (the gradient of x's slice start::step along
// dim) placed into zeros of x's shape by differentiable ops only (cat, reshape, narrow), so that
// the gradient can itself be differentiated; the in-place copy of the first-order path is not
// recorded.
Tensor embed_differentiably(const Tensor& g, const Shape& in_shape, int64_t dim, int64_t start, int64_t step) {
  const auto zeros_along = [&](const Tensor& like, int64_t d, int64_t n) {
    Shape s = like.shape();
    s[d] = n;
    return zeros(s, like.dtype(), like.device());
  };
  Tensor spread = g;
  const int64_t m = g.shape()[dim];
  if (step > 1 && m > 0) {
    // Each gradient row followed by step-1 zero rows, then the trailing zeros cut off.
    Tensor rows = unsqueeze(g, dim + 1);
    rows = cat({rows, zeros_along(rows, dim + 1, step - 1)}, dim + 1);
    Shape merged = g.shape();
    merged[dim] = m * step;
    spread = narrow(reshape(rows, merged), dim, 0, (m - 1) * step + 1);
  }
  const int64_t before = start, after = in_shape[dim] - start - spread.shape()[dim];
  std::vector<Tensor> parts;
  if (before > 0) parts.push_back(zeros_along(spread, dim, before));
  parts.push_back(spread);
  if (after > 0) parts.push_back(zeros_along(spread, dim, after));
  return parts.size() == 1 ? spread : cat(parts, dim);
}

}  // namespace

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  dim = wrap_existing_dim(dim, x.dim(), "slice");
  if (step <= 0) throw ValueError("slice: step must be positive, got " + std::to_string(step));
  const int64_t size = x.shape()[dim];
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape shape = x.shape(), strides = x.strides();
  shape[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  const Shape in_shape = x.shape();
  return make_view(x, shape, strides, x.offset() + start * x.strides()[dim], "SliceBackward",
                   [in_shape, dim, start, end, step](const Tensor& g) {
    if (g.requires_grad()) return embed_differentiably(g, in_shape, dim, start, step);
    Tensor full_grad = zeros(in_shape, g.dtype(), g.device());
    Tensor part = slice(full_grad, dim, start, end, step);
    NoGradGuard ng;
    copy_(part, g);
    return full_grad;
  });
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  dim = wrap_existing_dim(dim, x.dim(), "narrow");
  const int64_t size = x.shape()[dim];
  if (start < 0) start += size;
  if (start < 0 || length < 0 || start + length > size) {
    throw IndexError("narrow: start " + std::to_string(start) + " and length " + std::to_string(length) +
                     " are out of range for dimension " + std::to_string(dim) + " of size " + std::to_string(size));
  }
  return slice(x, dim, start, start + length, 1);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  dim = wrap_existing_dim(dim, x.dim(), "select");
  const int64_t size = x.shape()[dim];
  if (index < -size || index >= size) {
    throw IndexError("select: index " + std::to_string(index) + " is out of bounds for dimension " +
                     std::to_string(dim) + " with size " + std::to_string(size));
  }
  if (index < 0) index += size;
  Shape shape = x.shape(), strides = x.strides();
  shape.erase(shape.begin() + dim);
  strides.erase(strides.begin() + dim);
  const Shape in_shape = x.shape();
  return make_view(x, shape, strides, x.offset() + index * x.strides()[dim], "SelectBackward",
                   [in_shape, dim, index](const Tensor& g) {
    if (g.requires_grad()) return embed_differentiably(unsqueeze(g, dim), in_shape, dim, index, 1);
    Tensor full_grad = zeros(in_shape, g.dtype(), g.device());
    Tensor part = select(full_grad, dim, index);
    NoGradGuard ng;
    copy_(part, g);
    return full_grad;
  });
}

Tensor expand(const Tensor& x, const Shape& requested) {
  const int64_t nd = static_cast<int64_t>(requested.size());
  if (nd < x.dim()) {
    throw ShapeError("expand: target shape " + shape_str(requested) + " has fewer dims than the input " +
                     shape_str(x.shape()));
  }
  Shape shape = requested, strides(nd, 0);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t xi = i - (nd - x.dim());
    if (xi < 0) {
      if (shape[i] < 0) throw ShapeError("expand: -1 is not allowed for a new leading dimension");
      continue;
    }
    const int64_t have = x.shape()[xi];
    if (shape[i] == -1) shape[i] = have;
    if (shape[i] < 0) {
      throw ShapeError("expand: invalid size " + std::to_string(shape[i]) + " at dimension " + std::to_string(i) +
                       " (target " + shape_str(requested) + ")");
    }
    if (have == shape[i]) {
      strides[i] = x.strides()[xi];
    } else if (have != 1) {
      throw ShapeError("expand: the expanded size " + std::to_string(shape[i]) + " must match the existing size " +
                       std::to_string(have) + " at dimension " + std::to_string(i) + " (input shape " +
                       shape_str(x.shape()) + ", target " + shape_str(requested) + ")");
    }
  }
  if (shape == x.shape()) return x;
  const Shape in_shape = x.shape();
  return make_view(x, shape, strides, x.offset(), "ExpandBackward",
                   [in_shape](const Tensor& g) { return detail::sum_to(g, in_shape); });
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) { return expand(x, shape); }

Tensor squeeze(const Tensor& x, std::optional<int64_t> dim) {
  Shape shape;
  if (dim) {
    const int64_t d = wrap_dim(*dim, x.dim(), "squeeze");
    shape = x.shape();
    if (x.dim() > 0 && shape[d] == 1) shape.erase(shape.begin() + d);
  } else {
    for (const int64_t s : x.shape()) {
      if (s != 1) shape.push_back(s);
    }
  }
  return shape == x.shape() ? x : view(x, shape);
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  dim = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  Shape shape = x.shape(), strides = x.strides();
  const int64_t stride = dim < x.dim() ? x.strides()[dim] * x.shape()[dim] : 1;
  shape.insert(shape.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  const Shape in_shape = x.shape();
  return make_view(x, shape, strides, x.offset(), "UnsqueezeBackward",
                   [in_shape](const Tensor& g) { return reshape(g, in_shape); });
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  if (x.dim() == 0) return reshape(x, {1});
  start_dim = wrap_dim(start_dim, x.dim(), "flatten");
  end_dim = wrap_dim(end_dim, x.dim(), "flatten");
  if (start_dim > end_dim) throw ValueError("flatten: start_dim cannot come after end_dim");
  Shape shape(x.shape().begin(), x.shape().begin() + start_dim);
  int64_t merged = 1;
  for (int64_t i = start_dim; i <= end_dim; ++i) merged *= x.shape()[i];
  shape.push_back(merged);
  shape.insert(shape.end(), x.shape().begin() + end_dim + 1, x.shape().end());
  return reshape(x, shape);
}

Tensor Tensor::clone() const {
  Tensor out = Tensor::empty(shape(), dtype(), device());
  backend::backend_for(device()).copy(*this, out);
  if (needs_grad({this})) {
    record(out, "CloneBackward", {*this}, [](const Tensor& g) -> std::vector<Tensor> { return {g}; });
  }
  return out;
}

}  // namespace st
