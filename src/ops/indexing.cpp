// Joining, splitting and indexing ops: cat, stack, split, chunk, gather, scatter_add,
// index_select, masked_select, topk, sort, argsort, one_hot, tril, triu (cumsum: scan.cpp).
// Kernels live in src/backend/cpu/indexing.cpp.
#include <algorithm>
#include <string>

#include "ops/common.h"
#include "ops/known_range.h"
#include "ops/split_views.h"
#include "spiraltorch/selection.h"

namespace st {

using detail::backend_of;
using detail::Blocks;
using detail::blocks_of;

namespace {

std::string dims_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Data of x without history, contiguous.
Tensor raw_contiguous(const Tensor& x) { return x.detach().contiguous(); }

// 0-d tensors take part in dim-wise ops as 1-element vectors (PyTorch's rule).
Tensor as_1d_if_scalar(const Tensor& x) { return x.dim() == 0 ? reshape(x.detach(), {1}) : x.detach(); }

// A contiguous int64 copy (or alias) of an index tensor; int32 is accepted and widened.
Tensor index_int64(const Tensor& index, const char* op) {
  if (!index.defined()) throw ValueError(std::string(op) + ": index tensor is undefined");
  if (index.dtype() == Dtype::Int64) return raw_contiguous(index);
  if (index.dtype() == Dtype::Int32) return detail::cast_raw(index.detach(), Dtype::Int64).contiguous();
  throw DtypeError(std::string(op) + ": expected an int64 (or int32) index tensor, got " + dtype_name(index.dtype()));
}

// Throws IndexError (before anything is written) unless every index is in [0, size).
void check_indices(const Tensor& idx, int64_t size, int64_t dim, const char* op) {
  if (idx.numel() == 0 || detail::capturing(idx.device()) || detail::known_within(idx, 0, size)) return;
  const auto [lo, hi] = detail::index_range(idx);
  const int64_t bad = lo < 0 ? lo : hi >= size ? hi : 0;
  if (lo < 0 || hi >= size) {
    throw IndexError(std::string(op) + ": index " + std::to_string(bad) + " is out of bounds for dimension " +
                     std::to_string(dim) + " with size " + std::to_string(size));
  }
}

// Pads t with zeros at the end of each dim up to `shape` (differentiable through cat).
Tensor pad_to(const Tensor& t, const Shape& shape) {
  Tensor r = t;
  for (int64_t d = 0; d < r.dim(); ++d) {
    if (r.shape()[d] < shape[d]) {
      Shape zs = r.shape();
      zs[d] = shape[d] - r.shape()[d];
      r = cat({r, zeros(zs, r.dtype(), r.device())}, d);
    }
  }
  return r;
}

// Narrows the leading part of x (no history) to `shape` in every dim except `skip`.
Tensor narrow_to(const Tensor& x, const Shape& shape, int64_t skip) {
  Tensor r = x;
  for (int64_t d = 0; d < r.dim(); ++d) {
    if (d != skip && r.shape()[d] != shape[d]) r = narrow(r, d, 0, shape[d]);
  }
  return r;
}

// Scatters g (shape of idx) into zeros of `shape` at idx along dim: the backward of
// gather, sort and topk. Differentiable in g.
Tensor scatter_into_zeros(const Shape& shape, int64_t dim, const Tensor& idx, const Tensor& g) {
  return scatter_add(zeros(shape, g.dtype(), g.device()), dim, idx, g);
}

}  // namespace

// ---------------------------------------------------------------- cat / stack

Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
  if (xs.empty()) throw ValueError("cat: expected a non-empty list of tensors");
  int64_t ref = -1;
  Dtype dt = xs[0].defined() ? xs[0].dtype() : Dtype::Float32;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    if (!x.defined()) throw ValueError("cat: tensor at position " + std::to_string(i) + " is undefined");
    if (x.dim() == 0) {
      throw ShapeError("cat: zero-dimensional tensor (at position " + std::to_string(i) + ") cannot be concatenated");
    }
    dt = promote_types(dt, x.dtype());
    // Legacy rule kept by PyTorch: 1-D empty tensors are skipped whatever the other shapes.
    const bool skipped = x.dim() == 1 && x.numel() == 0;
    if (!skipped && ref < 0) ref = static_cast<int64_t>(i);
  }
  const Tensor& first = xs[ref < 0 ? 0 : ref];
  for (const Tensor& x : xs) detail::check_same_device(first, x, "cat");
  const int64_t nd = first.dim();
  dim = wrap_dim(dim, nd, "cat");
  Shape out_shape = first.shape();
  if (ref >= 0) {
    int64_t total = 0;
    for (const Tensor& x : xs) {
      if (x.dim() == 1 && x.numel() == 0) continue;
      if (x.dim() != nd) {
        throw ShapeError("cat: tensors must have the same number of dimensions, got " + shape_str(first.shape()) +
                         " and " + shape_str(x.shape()));
      }
      for (int64_t d = 0; d < nd; ++d) {
        if (d != dim && x.shape()[d] != first.shape()[d]) {
          throw ShapeError("cat: tensors must have the same shape except in dim " + std::to_string(dim) + ", got " +
                           shape_str(first.shape()) + " and " + shape_str(x.shape()));
        }
      }
      total += x.shape()[dim];
    }
    out_shape[dim] = total;
  }
  Tensor out = Tensor::empty(out_shape, dt, first.device());
  std::vector<Tensor> parts;
  std::vector<int64_t> starts(xs.size(), 0), lengths(xs.size(), 0);
  std::vector<bool> skipped(xs.size(), false);
  int64_t pos = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    skipped[i] = ref < 0 || (x.dim() == 1 && x.numel() == 0);
    if (skipped[i]) continue;
    starts[i] = pos;
    lengths[i] = x.shape()[dim];
    pos += lengths[i];
    if (x.numel() > 0) parts.push_back(detail::cast_raw(x.detach(), dt).contiguous());
  }
  const Blocks b = blocks_of(out_shape, dim);
  if (out.numel() > 0) backend_of(out).cat(parts, b.outer, out);
  if (needs_grad(xs)) {
    std::vector<bool> req(xs.size());
    std::vector<Dtype> dtypes(xs.size());
    std::vector<Shape> shapes(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      req[i] = xs[i].requires_grad();
      dtypes[i] = xs[i].dtype();
      shapes[i] = xs[i].shape();
    }
    record(out, "CatBackward", xs,
           [dim, starts, lengths, skipped, req, dtypes, shapes](const Tensor& g) -> std::vector<Tensor> {
      std::vector<Tensor> grads(req.size());
      for (size_t i = 0; i < req.size(); ++i) {
        if (!req[i]) continue;
        grads[i] =
            skipped[i] ? zeros(shapes[i], dtypes[i], g.device()) : narrow(g, dim, starts[i], lengths[i]).to(dtypes[i]);
      }
      return grads;
    });
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  if (xs.empty()) throw ValueError("stack: expected a non-empty list of tensors");
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].defined()) throw ValueError("stack: tensor at position " + std::to_string(i) + " is undefined");
    if (xs[i].shape() != xs[0].shape()) {
      throw ShapeError("stack: expects each tensor to be equal size, but got " + shape_str(xs[0].shape()) +
                       " at entry 0 and " + shape_str(xs[i].shape()) + " at entry " + std::to_string(i));
    }
  }
  const int64_t d = wrap_dim(dim, xs[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  parts.reserve(xs.size());
  for (const Tensor& x : xs) parts.push_back(unsqueeze(x, d));
  return cat(parts, d);
}

// ---------------------------------------------------------------- split / chunk

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  if (x.dim() == 0) throw ValueError("split: expected at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "split");
  if (split_size < 0) throw ValueError("split: split_size must be non-negative, got " + std::to_string(split_size));
  const int64_t size = x.shape()[d];
  if (split_size == 0 && size != 0) {
    throw ValueError("split: split_size can only be 0 if dimension size is 0, but got dimension size of " +
                     std::to_string(size));
  }
  const int64_t count = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<int64_t> lengths;
  lengths.reserve(count);
  for (int64_t i = 0; i < count; ++i) lengths.push_back(std::min(split_size, size - i * split_size));
  return detail::split_views(x, d, lengths, "SplitBackward");
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  if (x.dim() == 0) throw ValueError("split: expected at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "split");
  int64_t total = 0;
  for (const int64_t s : sizes) {
    if (s < 0) throw ValueError("split: split sizes must be non-negative, got " + dims_str(sizes));
    total += s;
  }
  if (total != x.shape()[d]) {
    throw ShapeError("split: split sizes " + dims_str(sizes) + " must sum exactly to " + std::to_string(x.shape()[d]) +
                     " (the size of dimension " + std::to_string(d) + " of shape " + shape_str(x.shape()) +
                     "), but sum to " + std::to_string(total));
  }
  return detail::split_views(x, d, sizes, "SplitWithSizesBackward");
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  if (x.dim() == 0) throw ValueError("chunk: expected at least a 1-dimensional tensor");
  if (chunks <= 0) throw ValueError("chunk: number of chunks must be positive, got " + std::to_string(chunks));
  const int64_t d = wrap_dim(dim, x.dim(), "chunk");
  const int64_t size = x.shape()[d];
  if (size == 0) return split(x, std::vector<int64_t>(chunks, 0), d);  // `chunks` empty pieces, like PyTorch
  return split(x, (size + chunks - 1) / chunks, d);
}

// ---------------------------------------------------------------- gather / scatter

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  const Tensor idx_in = index_int64(index, "gather");
  const int64_t nd = std::max<int64_t>(x.dim(), 1);
  const int64_t d = wrap_dim(dim, x.dim(), "gather");
  if (std::max<int64_t>(index.dim(), 1) != nd) {
    throw ShapeError("gather: index tensor must have the same number of dimensions as the input, got index shape " +
                     shape_str(index.shape()) + " and input shape " + shape_str(x.shape()));
  }
  detail::check_same_device(x, index, "gather");
  const Tensor x1 = as_1d_if_scalar(x);
  const Tensor idx = as_1d_if_scalar(idx_in);
  for (int64_t i = 0; i < nd; ++i) {
    if (i != d && idx.shape()[i] > x1.shape()[i]) {
      throw ShapeError("gather: index shape " + shape_str(index.shape()) + " exceeds input shape " +
                       shape_str(x.shape()) + " in dimension " + std::to_string(i));
    }
  }
  check_indices(idx, x1.shape()[d], d, "gather");
  Tensor out = Tensor::empty(index.shape(), x.dtype(), x.device());
  if (out.numel() > 0) {
    const Tensor xc = narrow_to(x1, idx.shape(), d).contiguous();
    const Blocks b = blocks_of(idx.shape(), d);
    backend_of(x).gather(xc, idx, b.outer, xc.shape()[d], b.n, b.inner, out);
  }
  if (needs_grad({&x})) {
    const Shape x_shape = x.shape();
    record(out, "GatherBackward", {x}, [x_shape, d, idx_in](const Tensor& g) -> std::vector<Tensor> {
      return {scatter_into_zeros(x_shape, d, idx_in, g)};
    }, {idx_in});
  }
  return out;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  const Tensor idx_in = index_int64(index, "scatter_add");
  const int64_t nd = std::max<int64_t>(x.dim(), 1);
  const int64_t d = wrap_dim(dim, x.dim(), "scatter_add");
  if (std::max<int64_t>(index.dim(), 1) != nd || std::max<int64_t>(src.dim(), 1) != nd) {
    throw ShapeError("scatter_add: index, src and self must have the same number of dimensions, got index " +
                     shape_str(index.shape()) + ", src " + shape_str(src.shape()) + " and self " +
                     shape_str(x.shape()));
  }
  if (src.dtype() != x.dtype()) {
    throw DtypeError(std::string("scatter_add: expected self and src to have the same dtype, got ") +
                     dtype_name(x.dtype()) + " and " + dtype_name(src.dtype()));
  }
  detail::check_same_device(x, index, "scatter_add");
  detail::check_same_device(x, src, "scatter_add");
  const Tensor x1 = as_1d_if_scalar(x);
  const Tensor src1 = as_1d_if_scalar(src);
  const Tensor idx = as_1d_if_scalar(idx_in);
  for (int64_t i = 0; i < nd; ++i) {
    if (idx.shape()[i] > src1.shape()[i] || (i != d && idx.shape()[i] > x1.shape()[i])) {
      throw ShapeError("scatter_add: index shape " + shape_str(index.shape()) + " exceeds src shape " +
                       shape_str(src.shape()) + " or self shape " + shape_str(x.shape()) + " in dimension " +
                       std::to_string(i));
    }
  }
  check_indices(idx, x1.shape()[d], d, "scatter_add");
  Tensor out = x1.clone();  // fresh and contiguous; x1 carries no history
  if (idx.numel() > 0) {
    const Tensor sc = narrow_to(src1, idx.shape(), -1).contiguous();
    const Blocks b = blocks_of(idx.shape(), d);
    bool covers = true;
    for (int64_t i = 0; i < nd; ++i) covers &= i == d || idx.shape()[i] == out.shape()[i];
    if (covers) {
      backend_of(out).scatter_add(out, idx, sc, b.outer, out.shape()[d], b.n, b.inner);
    } else {
      // The index covers only part of self: scatter into a contiguous copy of that part.
      Tensor region = narrow_to(out, idx.shape(), d);
      Tensor tmp = region.contiguous();
      backend_of(out).scatter_add(tmp, idx, sc, b.outer, tmp.shape()[d], b.n, b.inner);
      backend_of(out).copy(tmp, region);
    }
  }
  if (x.dim() == 0) out = reshape(out, {});
  if (needs_grad({&x, &src})) {
    const bool x_req = x.requires_grad(), src_req = src.requires_grad();
    const Shape src_shape = src.shape();
    record(out, "ScatterAddBackward", {x, src},
           [d, idx_in, x_req, src_req, src_shape](const Tensor& g) -> std::vector<Tensor> {
      Tensor gs;
      if (src_req) {
        gs = gather(g, d, idx_in);
        if (gs.shape() != src_shape) gs = pad_to(gs, src_shape);
      }
      return {x_req ? g : Tensor(), gs};
    }, {idx_in});
  }
  return out;
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  if (index.defined() && index.dim() > 1) {
    throw ShapeError("index_select: index must be a 1-D tensor, got shape " + shape_str(index.shape()));
  }
  const Tensor idx = reshape(index_int64(index, "index_select"), {-1});
  const int64_t d = wrap_dim(dim, x.dim(), "index_select");
  detail::check_same_device(x, index, "index_select");
  const Tensor x1 = as_1d_if_scalar(x);
  const int64_t n = x1.shape()[d], k = idx.numel();
  check_indices(idx, n, d, "index_select");
  Shape out_shape = x1.shape();
  out_shape[d] = k;
  if (x.dim() == 0) {
    if (k != 1) {
      throw ShapeError("index_select: a 0-d input takes an index with exactly one element, got " + std::to_string(k));
    }
    out_shape = {};
  }
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  if (out.numel() > 0) {
    const Tensor xc = x1.contiguous();
    const Blocks b = blocks_of(x1.shape(), d);
    backend_of(x).index_select(xc, idx, b.outer, n, k, b.inner, out);
  }
  if (needs_grad({&x})) {
    const Shape x_shape = x.shape();
    record(out, "IndexSelectBackward", {x}, [x_shape, d, idx](const Tensor& g) -> std::vector<Tensor> {
      if (x_shape.empty()) return {g};
      return {index_add(zeros(x_shape, g.dtype(), g.device()), d, idx, g)};
    }, {idx});
  }
  return out;
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) {
  const int64_t d = wrap_dim(dim, x.dim(), "index_add");
  if (index.dim() != 1) throw ShapeError("index_add: index must be 1-D, got shape " + shape_str(index.shape()));
  bool rows_match = source.dim() == x.dim() && (x.dim() == 0 || source.shape()[d] == index.shape()[0]);
  if (!rows_match) {
    throw ShapeError("index_add: source of shape " + shape_str(source.shape()) + " does not match index of length " +
                     std::to_string(index.shape()[0]) + " along dim " + std::to_string(d) + " of an input of shape " +
                     shape_str(x.shape()));
  }
  const Tensor src = alpha.to_double() == 1 ? source : mul(source, alpha);
  for (int64_t i = 0; i < x.dim(); ++i) rows_match = rows_match && (i == d || src.shape()[i] == x.shape()[i]);
  if (rows_match && x.dim() > 0 && src.dtype() == x.dtype() && !needs_grad({&x, &src})) {
    const Tensor idx = index_int64(index, "index_add");
    detail::check_same_device(x, index, "index_add");
    detail::check_same_device(x, src, "index_add");
    check_indices(idx, x.shape()[d], d, "index_add");
    Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
    detail::copy_between(x, out);
    detail::index_add_into(out, d, idx, src);
    return out;
  }
  // Differentiable (or smaller-than-x source): scatter_add through the index broadcast over src.
  Shape view(static_cast<size_t>(std::max<int64_t>(src.dim(), 1)), 1);
  view[static_cast<size_t>(d)] = index.shape()[0];
  return scatter_add(x, d, expand(reshape(index, view), src.shape()), src);
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  if (mask.dtype() != Dtype::Bool) {
    throw DtypeError(std::string("masked_select: expected a bool mask, got ") + dtype_name(mask.dtype()));
  }
  detail::check_same_device(x, mask, "masked_select");
  const Shape shape = broadcast_shapes(x.shape(), mask.shape(), "masked_select");
  const Tensor xb = detail::expand_view(x.detach(), shape).contiguous();
  const Tensor mb = detail::expand_view(mask.detach(), shape).contiguous();
  int64_t count = 0;
  if (mb.numel() > 0) {
    NoGradGuard ng;
    count = static_cast<int64_t>(sum(mb).item());
  }
  Tensor out = Tensor::empty({count}, x.dtype(), x.device());
  if (count > 0) backend_of(x).masked_select(xb, mb, out);
  if (needs_grad({&x})) {
    // Flat positions of the selected elements, for scattering the gradient back.
    Tensor positions = Tensor::empty({count}, Dtype::Int64, x.device());
    if (count > 0) {
      const Tensor all_pos = arange(0, static_cast<double>(mb.numel()), 1.0, Dtype::Int64, x.device());
      backend_of(x).masked_select(reshape(all_pos, shape).contiguous(), mb, positions);
    }
    const Shape x_shape = x.shape();
    const int64_t numel = shape_numel(shape);
    record(out, "MaskedSelectBackward", {x},
           [positions, shape, x_shape, numel](const Tensor& g) -> std::vector<Tensor> {
      const Tensor flat = scatter_into_zeros({numel}, 0, positions, g);
      return {detail::sum_to(reshape(flat, shape), x_shape)};
    });
  }
  return out;
}

// ---------------------------------------------------------------- sort / topk

namespace {

std::pair<Tensor, Tensor> sort_k(const Tensor& x, int64_t dim, int64_t k, bool descending, const char* op,
                                 const char* node_name) {
  const int64_t d = wrap_dim(dim, x.dim(), op);
  const Shape& shape = x.shape();
  const int64_t n = x.dim() == 0 ? 1 : shape[d];
  if (k < 0 || k > n) {
    throw ValueError(std::string(op) + ": k (" + std::to_string(k) + ") is out of range for dimension " +
                     std::to_string(d) + " of size " + std::to_string(n));
  }
  const Dtype compute = is_half(x.dtype()) ? Dtype::Float32 : x.dtype();
  Shape out_shape = shape;
  if (x.dim() > 0) out_shape[d] = k;
  Tensor values = Tensor::empty(out_shape, compute, x.device());
  Tensor indices = Tensor::empty(out_shape, Dtype::Int64, x.device());
  const Blocks b = x.dim() == 0 ? Blocks{} : blocks_of(shape, d);
  if (b.outer * k * b.inner > 0) {
    const Tensor xc = detail::cast_raw(x.detach(), compute).contiguous();
    backend_of(x).sort(xc, b.outer, n, b.inner, k, descending, values, indices);
  }
  if (compute != x.dtype()) values = detail::cast_raw(values, x.dtype());
  if (needs_grad({&x})) {
    const Tensor idx = indices;
    record(values, node_name, {x}, [shape, d, idx](const Tensor& g) -> std::vector<Tensor> {
      if (shape.empty()) return {g};
      return {scatter_into_zeros(shape, d, idx, g)};
    }, {indices});
  }
  return {values, indices};
}

}  // namespace

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  // Results always come sorted; with sorted=false any order is allowed, so this one is too.
  (void)sorted;
  return sort_k(x, dim, k, largest, "topk", "TopkBackward");
}

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  const int64_t d = wrap_dim(dim, x.dim(), "sort");
  return sort_k(x, d, x.dim() == 0 ? 1 : x.shape()[d], descending, "sort", "SortBackward");
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) { return sort(x.detach(), dim, descending).second; }

// ---------------------------------------------------------------- one_hot

Tensor one_hot(const Tensor& index, int64_t num_classes) {
  if (!index.defined()) throw ValueError("one_hot: index tensor is undefined");
  if (index.dtype() != Dtype::Int64 && index.dtype() != Dtype::Int32) {
    throw DtypeError(std::string("one_hot: expected an int64 (or int32) index tensor, got ") +
                     dtype_name(index.dtype()));
  }
  if (num_classes < -1) {
    throw ValueError("one_hot: num_classes must be -1 (infer) or non-negative, got " + std::to_string(num_classes));
  }
  const Tensor idx = index_int64(index, "one_hot");
  int64_t classes = num_classes;
  if (idx.numel() == 0) {
    if (classes == -1) throw ValueError("one_hot: cannot infer the number of classes from an empty tensor");
  } else {
    const auto [lo, hi] = detail::index_range(idx);
    if (lo < 0) throw IndexError("one_hot: class values must be non-negative, got " + std::to_string(lo));
    if (classes == -1) classes = hi + 1;
    if (hi >= classes) {
      throw IndexError("one_hot: class value " + std::to_string(hi) + " is out of range for num_classes " +
                       std::to_string(classes));
    }
  }
  // A comparison against the class ids: one broadcast kernel on every device (the wgpu backend
  // has no int64 scatter), and each output element is written once either way.
  const Tensor ids = arange(0.0, static_cast<double>(classes), 1.0, Dtype::Int64, index.device());
  return detail::cast_raw(eq(unsqueeze(idx, -1), ids), Dtype::Int64);
}

// ---------------------------------------------------------------- tril / triu

namespace {

Tensor triangle(const Tensor& x, int64_t diagonal, bool upper) {
  const char* op = upper ? "triu" : "tril";
  if (x.dim() < 2) {
    throw ShapeError(std::string(op) + ": expected a tensor with at least 2 dimensions, got shape " +
                     shape_str(x.shape()));
  }
  const int64_t rows = x.shape()[x.dim() - 2], cols = x.shape()[x.dim() - 1];
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0) {
    backend_of(x).triangle(raw_contiguous(x), x.numel() / (rows * cols), rows, cols, diagonal, upper, out);
  }
  if (needs_grad({&x})) {
    record(out, upper ? "TriuBackward" : "TrilBackward", {x},
           [diagonal, upper](const Tensor& g) -> std::vector<Tensor> {
      return {upper ? triu(g, diagonal) : tril(g, diagonal)};
    });
  }
  return out;
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle(x, diagonal, false); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle(x, diagonal, true); }

namespace detail {

void index_add_into(Tensor& out, int64_t dim, const Tensor& idx, const Tensor& src) {
  const int64_t k = idx.numel();
  if (out.numel() == 0 || k == 0) return;
  const Tensor s = raw_contiguous(src);
  const Blocks b = blocks_of(out.shape(), dim);
  backend::Backend& be = backend_of(out);
  if (be.index_add(out, idx, s, b.outer, b.n, k, b.inner)) return;
  Shape view(static_cast<size_t>(out.dim()), 1);
  view[static_cast<size_t>(dim)] = k;
  const Tensor full = expand_view(reshape(idx, view), s.shape()).contiguous();
  be.scatter_add(out, full, s, b.outer, b.n, k, b.inner);
}

std::pair<int64_t, int64_t> index_range(const Tensor& idx) {
  if (idx.dtype() == Dtype::Int64 && idx.is_contiguous()) {
    int64_t lo = 0, hi = 0;
    if (backend_of(idx).index_range(idx, lo, hi)) return {lo, hi};
  }
  NoGradGuard ng;
  // On a device each host read is a sync: both ends come back in one.
  const std::vector<int64_t> r = stack({amin(idx), amax(idx)}).to_vector<int64_t>();
  return {r[0], r[1]};
}

}  // namespace detail

namespace detail {

Blocks blocks_of(const Shape& shape, int64_t dim) {
  Blocks b;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < dim) {
      b.outer *= shape[i];
    } else if (i == dim) {
      b.n = shape[i];
    } else {
      b.inner *= shape[i];
    }
  }
  return b;
}

}  // namespace detail

}  // namespace st
