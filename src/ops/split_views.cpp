#include "ops/split_views.h"

#include <span>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::detail {

namespace {

// The pieces' view base, set as every view op sets it (views.cpp make_view), so an in-place write
// through a piece rewires the tensor it is a view of.
void mark_views(const Tensor& x, std::vector<Tensor>& pieces) {
  const bool nested = x.impl()->autograd && x.impl()->autograd->view_base;
  if (!nested && !grad_enabled()) return;
  const std::shared_ptr<TensorImpl> base = nested ? x.impl()->autograd->view_base : x.impl_ptr();
  for (Tensor& p : pieces) p.autograd_meta().view_base = base;
}

// Gradient i, or zeros of piece i's shape where none arrived.
Tensor grad_or_zeros(std::span<const Tensor> g, size_t i, const Shape& shape, Dtype dtype, Device device) {
  return g[i].defined() ? g[i] : zeros(shape, dtype, device);
}

}  // namespace

std::vector<Tensor> split_views(const Tensor& x, int64_t d, const std::vector<int64_t>& lengths, const char* name) {
  std::vector<Tensor> pieces;
  pieces.reserve(lengths.size());
  {
    NoGradGuard ng;  // the views record nothing each: one node for all of them is recorded below
    int64_t start = 0;
    for (const int64_t len : lengths) {
      pieces.push_back(narrow(x, d, start, len));
      start += len;
    }
  }
  mark_views(x, pieces);
  if (needs_grad({&x})) {
    record_multi(pieces, name, {x},
                 [d, lengths, shape = x.shape(), dtype = x.dtype(),
                  device = x.device()](std::span<const Tensor> g) -> std::vector<Tensor> {
      std::vector<Tensor> parts;
      parts.reserve(g.size());
      for (size_t i = 0; i < g.size(); ++i) {
        Shape s = shape;
        s[d] = lengths[i];
        parts.push_back(grad_or_zeros(g, i, s, dtype, device));
      }
      return {cat(parts, d)};
    });
  }
  return pieces;
}

std::vector<Tensor> unbind_views(const Tensor& x, int64_t d) {
  const int64_t n = x.shape()[d];
  std::vector<Tensor> pieces;
  pieces.reserve(static_cast<size_t>(n));
  {
    NoGradGuard ng;
    for (int64_t i = 0; i < n; ++i) pieces.push_back(select(x, d, i));
  }
  mark_views(x, pieces);
  if (needs_grad({&x}) && n > 0) {
    Shape piece = x.shape();
    piece.erase(piece.begin() + d);
    record_multi(pieces, "UnbindBackward", {x},
                 [d, piece, dtype = x.dtype(), device = x.device()](std::span<const Tensor> g) -> std::vector<Tensor> {
      std::vector<Tensor> parts;
      parts.reserve(g.size());
      for (size_t i = 0; i < g.size(); ++i) parts.push_back(grad_or_zeros(g, i, piece, dtype, device));
      return {stack(parts, d)};
    });
  }
  return pieces;
}

}  // namespace st::detail
