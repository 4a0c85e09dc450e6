// Ops that move elements without computing on them. flip and roll are index transforms built from
// existing backend entries on the tensor's device: flip is an index_select with the reversed
// positions made on the device (no host index, no host read), roll a cat of two narrowed views. The
// others (movedim, unflatten, unbind, tensor_split, rot90) are views or compositions of flip and views.
#include <algorithm>
#include <string>

#include "ops/common.h"
#include "ops/split_views.h"

namespace st {

using detail::backend_of;

namespace {

// The dims of `dims` normalised against x, refusing repeats.
std::vector<int64_t> distinct_dims(const Dims& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  for (const int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, ndim, op);
    if (std::find(out.begin(), out.end(), d) != out.end()) {
      throw ValueError(std::string(op) + ": dimension " + shape_str(dims) + " repeats dim " + std::to_string(d));
    }
    out.push_back(d);
  }
  return out;
}

// x reversed along d, without autograd: positions n-1, ..., 0 made on x's device (n - cumsum of
// ones), then the backend's index_select; the index needs no range check, it is correct by construction.
Tensor reverse_raw(const Tensor& x, int64_t d) {
  const int64_t n = x.shape()[d];
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  NoGradGuard no_grad;
  const Tensor index = rsub(cumsum(ones({n}, Dtype::Int64, x.device()), 0), Scalar(n)).contiguous();
  const Tensor xc = x.detach().contiguous();
  const detail::Blocks b = detail::blocks_of(x.shape(), d);
  backend_of(x).index_select(xc, index, b.outer, n, n, b.inner, out);
  return out;
}

}  // namespace

Tensor flip(const Tensor& x, const Dims& dims) {
  const std::vector<int64_t> ds = distinct_dims(dims, x.dim(), "flip");
  Tensor out = x.detach();
  for (const int64_t d : ds) {
    if (x.dim() > 0) out = reverse_raw(out, d);
  }
  if (ds.empty() || x.dim() == 0) out = out.clone();  // flip always returns a copy, as torch.flip
  if (needs_grad({&x})) {
    record(out, "FlipBackward", {x},
           [ds](const Tensor& g) -> std::vector<Tensor> { return {flip(g, Dims(ds.begin(), ds.end()))}; });
  }
  return out;
}

Tensor roll(const Tensor& x, const Dims& shifts, const Dims& dims) {
  if (dims.empty()) {
    if (shifts.size() != 1) {
      throw ValueError("roll: without dims, shifts must be one number, got " + shape_str(shifts));
    }
    return reshape(roll(flatten(x), shifts, {0}), x.shape());
  }
  if (shifts.size() != dims.size()) {
    throw ValueError("roll: " + std::to_string(shifts.size()) + " shifts " + shape_str(shifts) + " for " +
                     std::to_string(dims.size()) + " dims " + shape_str(dims));
  }
  Tensor out = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_existing_dim(dims[i], x.dim(), "roll");
    const int64_t n = x.shape()[d];
    const int64_t s = n == 0 ? 0 : ((shifts[i] % n) + n) % n;
    // The last s elements move to the front: a cat of two views, whose autograd rolls the gradient back.
    if (s != 0) out = cat({narrow(out, d, n - s, s), narrow(out, d, 0, n - s)}, d);
  }
  return out.same(x) ? x.clone() : out;
}

Tensor movedim(const Tensor& x, const Dims& source, const Dims& destination) {
  const int64_t nd = x.dim();
  const std::vector<int64_t> src = distinct_dims(source, nd, "movedim");
  const std::vector<int64_t> dst = distinct_dims(destination, nd, "movedim");
  if (src.size() != dst.size()) {
    throw ValueError("movedim: source " + shape_str(source) + " and destination " + shape_str(destination) +
                     " name different numbers of dims (" + std::to_string(src.size()) + " and " +
                     std::to_string(dst.size()) + ")");
  }
  if (nd == 0) return x;
  // The moved dims take their destinations; the others keep their order in the places left.
  Dims order(nd, -1);
  for (size_t i = 0; i < src.size(); ++i) order[dst[i]] = src[i];
  int64_t next = 0;
  for (int64_t& o : order) {
    if (o >= 0) continue;
    while (std::find(src.begin(), src.end(), next) != src.end()) ++next;
    o = next++;
  }
  return permute(x, order);
}

Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes) {
  const int64_t d = wrap_existing_dim(dim, x.dim(), "unflatten");
  if (sizes.empty()) throw ValueError("unflatten: sizes must be non-empty");
  const int64_t n = x.shape()[d];
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred >= 0) {
        throw ValueError("unflatten: only one dimension may be inferred (-1), got sizes " + shape_str(sizes));
      }
      inferred = static_cast<int64_t>(i);
    } else {
      known *= sizes[i];
    }
  }
  Shape full = sizes;
  if (inferred >= 0) {
    if (known == 0 || n % known != 0) {
      throw ShapeError("unflatten: sizes " + shape_str(sizes) + " do not divide dim " + std::to_string(d) +
                       " of size " + std::to_string(n));
    }
    full[inferred] = n / known;
  } else if (known != n) {
    throw ShapeError("unflatten: sizes " + shape_str(sizes) + " multiply to " + std::to_string(known) +
                     ", not to dim " + std::to_string(d) + " of size " + std::to_string(n));
  }
  Shape shape(x.shape().begin(), x.shape().begin() + d);
  shape.insert(shape.end(), full.begin(), full.end());
  shape.insert(shape.end(), x.shape().begin() + d + 1, x.shape().end());
  return reshape(x, shape);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  if (x.dim() == 0) throw IndexError("unbind: a 0-d tensor has no dimension to unbind");
  const int64_t d = wrap_existing_dim(dim, x.dim(), "unbind");
  return detail::unbind_views(x, d);
}

std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim) {
  if (x.dim() == 0) throw IndexError("tensor_split: expected at least a 1-dimensional tensor");
  if (sections <= 0) {
    throw ValueError("tensor_split: number of sections must be larger than 0, got " + std::to_string(sections));
  }
  const int64_t d = wrap_existing_dim(dim, x.dim(), "tensor_split");
  const int64_t size = x.shape()[d], q = size / sections, r = size % sections;
  std::vector<int64_t> lengths;
  lengths.reserve(static_cast<size_t>(sections));
  for (int64_t i = 0; i < sections; ++i)
    lengths.push_back(q + (i < r ? 1 : 0));  // the first size % sections are one longer
  return detail::split_views(x, d, lengths, "TensorSplitBackward");
}

std::vector<Tensor> tensor_split(const Tensor& x, const std::vector<int64_t>& indices, int64_t dim) {
  if (x.dim() == 0) throw IndexError("tensor_split: expected at least a 1-dimensional tensor");
  const int64_t d = wrap_existing_dim(dim, x.dim(), "tensor_split");
  const int64_t size = x.shape()[d];
  std::vector<int64_t> bounds{0};
  for (const int64_t i : indices) bounds.push_back(std::clamp<int64_t>(i < 0 ? i + size : i, 0, size));
  bounds.push_back(size);
  if (std::is_sorted(bounds.begin(), bounds.end())) {
    // Ascending indices: the pieces tile the dimension, one node for all of them.
    std::vector<int64_t> lengths;
    for (size_t i = 0; i + 1 < bounds.size(); ++i) lengths.push_back(bounds[i + 1] - bounds[i]);
    return detail::split_views(x, d, lengths, "TensorSplitBackward");
  }
  // Indices out of order give overlapping or empty pieces (as in PyTorch): one view each.
  std::vector<Tensor> out;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    const int64_t a = std::min(bounds[i], size);
    out.push_back(narrow(x, d, a, std::max<int64_t>(bounds[i + 1] - bounds[i], 0)));
  }
  return out;
}

Tensor rot90(const Tensor& x, int64_t k, const Dims& dims) {
  if (dims.size() != 2) throw ValueError("rot90: expected two dims, got " + shape_str(dims));
  if (x.dim() < 2) throw ShapeError("rot90: expected at least a 2-D tensor, got " + std::to_string(x.dim()) + "-D");
  const std::vector<int64_t> ds = distinct_dims(dims, x.dim(), "rot90");
  const int64_t d0 = ds[0], d1 = ds[1];
  switch (((k % 4) + 4) % 4) {
    case 1:
      return transpose(flip(x, {d1}), d0, d1);
    case 2:
      return flip(x, {d0, d1});
    case 3:
      return transpose(flip(x, {d0}), d0, d1);
    default:
      return x.clone();
  }
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim) {
  if (indices.dtype() != Dtype::Int64 && indices.dtype() != Dtype::Int32) {
    throw DtypeError(std::string("take_along_dim: indices must be int64 or int32, got ") + dtype_name(indices.dtype()));
  }
  const Tensor idx = cast(indices, Dtype::Int64);
  if (!dim) return gather(reshape(x, {-1}), 0, reshape(idx, {-1}));
  if (x.dim() != indices.dim()) {
    throw ShapeError("take_along_dim: input " + shape_str(x.shape()) + " and indices " + shape_str(indices.shape()) +
                     " must have the same number of dimensions");
  }
  const int64_t d = wrap_existing_dim(*dim, x.dim(), "take_along_dim");
  // Every dim but d broadcasts; d keeps its own size on each side.
  Shape xs = x.shape(), is = indices.shape();
  xs[d] = is[d] = 1;
  Shape xb = broadcast_shapes(xs, is, "take_along_dim"), ib = xb;
  xb[d] = x.shape()[d];
  ib[d] = indices.shape()[d];
  return gather(expand(x, xb), d, expand(idx, ib));
}

}  // namespace st
