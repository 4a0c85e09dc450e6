#include "ops/common.h"

#include <optional>

namespace st {

using detail::backend_of;

namespace {

// Refuses in-place writes that would corrupt autograd: leaves that require grad,
// and views of tensors that are part of a graph.
void check_inplace(const Tensor& x, const char* op) {
  if (x.storage()->read_only()) {
    throw SpiralError(std::string(op) +
                      ": the tensor shares read-only memory (a read-only NumPy array, memmap, "
                      "bytes or JAX buffer) and cannot be written in place; write to a .clone()");
  }
  if (!grad_enabled()) return;
  if (x.requires_grad() && x.is_leaf()) {
    throw SpiralError(
        std::string(op) +
        ": a leaf tensor that requires grad is being used in an in-place operation; wrap it in no_grad()");
  }
  if (x.impl()->autograd && x.impl()->autograd->view_base) {
    const Tensor base(x.impl()->autograd->view_base);
    if (base.requires_grad() && base.is_leaf()) {
      throw SpiralError(std::string(op) +
                        ": a view of a leaf tensor that requires grad is being used in an in-place operation");
    }
  }
}

// Region of a tensor laid out like `base` that `view` covers (same storage offsets).
Tensor region_of(const Tensor& laid_out_like_base, const Tensor& base, const Tensor& view) {
  return Tensor::from_storage(laid_out_like_base.storage(), view.shape(), view.strides(),
                              laid_out_like_base.offset() + (view.offset() - base.offset()),
                              laid_out_like_base.dtype());
}

// After `view` (a view of a graph tensor) was overwritten with `value`, gives the base
// a node that routes gradient for the overwritten region into `value` and the rest
// into the base's previous history, and makes `view` a view of that new history.
void rebase_view(Tensor& view, const Tensor& value) {
  Tensor base(view.impl()->autograd->view_base);
  if (base.strides() != contiguous_strides(base.shape())) {
    throw SpiralError("in-place write through a view: the base tensor must be contiguous");
  }
  // The base's history so far, as its own handle.
  Tensor previous = base.detach();
  if (base.requires_grad()) {
    auto& m = previous.autograd_meta();
    m.requires_grad = true;
    m.grad_fn = base.grad_fn();
    m.output_nr = base.output_nr();
  }
  const Tensor base_geom = base.detach(), view_geom = view.detach();
  Tensor updated = base.detach();
  record(updated, "CopySlices", {previous, value}, [base_geom, view_geom](const Tensor& g) -> std::vector<Tensor> {
    Tensor rest = g.contiguous().clone();
    Tensor hole = region_of(rest, base_geom, view_geom);
    {
      NoGradGuard ng;
      fill_(hole, 0);
    }
    const Tensor gc = g.contiguous();
    return {rest, region_of(gc, base_geom, view_geom).clone()};
  });
  auto& bm = base.autograd_meta();
  bm.requires_grad = true;
  bm.grad_fn = updated.grad_fn();
  bm.output_nr = 0;
  // The view now reads from the rebased history.
  Tensor fresh = region_of(base.detach(), base.detach(), view);
  record(fresh, "AsStridedBackward", {base}, [base_geom, view_geom](const Tensor& g) -> std::vector<Tensor> {
    Tensor full = zeros(base_geom.shape(), g.dtype(), g.device());
    Tensor hole = region_of(full, base_geom, view_geom);
    NoGradGuard ng;
    copy_(hole, g);
    return {full};
  });
  auto& vm = view.autograd_meta();
  vm.requires_grad = true;
  vm.grad_fn = fresh.grad_fn();
  vm.output_nr = 0;
}

void check_target(const Tensor& x, const Tensor& src, const char* op) {
  detail::check_same_device(x, src, op);
  const Shape b = broadcast_shapes(x.shape(), src.shape(), op);
  if (b != x.shape()) {
    throw ShapeError(std::string(op) + ": output with shape " + shape_str(x.shape()) +
                     " doesn't match the broadcast shape " + shape_str(b));
  }
  if (is_integral(x.dtype()) && is_floating(src.dtype())) {
    throw DtypeError(std::string(op) + ": result type " + dtype_name(src.dtype()) +
                     " can't be cast to the desired output type " + dtype_name(x.dtype()));
  }
}

// Writes `value` (same shape after broadcasting) into x's memory and makes x carry
// value's history when it has one.
Tensor& commit(Tensor& x, const Tensor& value) {
  {
    NoGradGuard ng;
    Tensor dst = x.detach();
    backend_of(x).copy(detail::expand_view(value, x.shape()), dst);
  }
  x.storage()->bump_version();
  const bool view = x.impl()->autograd && x.impl()->autograd->view_base;
  if (grad_enabled() && view && (value.requires_grad() || Tensor(x.impl()->autograd->view_base).requires_grad())) {
    rebase_view(x, value.requires_grad() ? value : value.detach());
    return x;
  }
  if (value.requires_grad() && grad_enabled()) {
    auto& meta = x.autograd_meta();
    meta.requires_grad = true;
    meta.grad_fn = value.grad_fn();
    meta.output_nr = value.output_nr();
  }
  return x;
}

// Without history, a same-dtype float op whose target is dense and does not share
// memory with the operand can write straight into x: one pass and no temporaries,
// instead of computing out of place and copying back.
bool write_direct(const Tensor& x, const Tensor& other) {
  if (grad_enabled() && (x.requires_grad() || other.requires_grad())) return false;
  if (x.dtype() != other.dtype() || (x.dtype() != Dtype::Float32 && x.dtype() != Dtype::Float64)) return false;
  if (!x.is_contiguous() || x.storage() == other.storage()) return false;
  return true;
}

Tensor& binary_into(Tensor& x, backend::BinaryOp op, const Tensor& other) {
  Tensor dst = x.detach();
  backend_of(x).binary(op, dst, detail::expand_view(other, x.shape()), dst);
  x.storage()->bump_version();
  return x;
}

template <typename F>
Tensor& inplace(Tensor& x, const Tensor& other, const char* op, F compute,
                std::optional<backend::BinaryOp> direct = std::nullopt) {
  check_inplace(x, op);
  check_target(x, other, op);
  if (direct && write_direct(x, other)) return binary_into(x, *direct, other);
  // With history involved, compute out of place on a private copy of x, then commit.
  if (grad_enabled() && (x.requires_grad() || other.requires_grad())) {
    const Tensor result = compute(x.requires_grad() ? x.clone() : x.detach(), other);
    return commit(x, result.to(x.dtype()));
  }
  NoGradGuard ng;
  return commit(x, compute(x.detach(), other));
}

}  // namespace

// add_/sub_ with alpha != 1 scale the operand first (one temporary of its size).
Tensor& add_(Tensor& x, const Tensor& o, Scalar alpha) {
  if (alpha.to_double() != 1.0 && write_direct(x, o)) {
    check_inplace(x, "add_");
    check_target(x, o, "add_");
    return binary_into(x, backend::BinaryOp::Add, mul(o, alpha));
  }
  return inplace(x, o, "add_", [alpha](const Tensor& a, const Tensor& b) { return add(a, b, alpha); },
                 alpha.to_double() == 1.0 ? std::optional(backend::BinaryOp::Add) : std::nullopt);
}
Tensor& sub_(Tensor& x, const Tensor& o, Scalar alpha) {
  if (alpha.to_double() != 1.0 && write_direct(x, o)) {
    check_inplace(x, "sub_");
    check_target(x, o, "sub_");
    return binary_into(x, backend::BinaryOp::Sub, mul(o, alpha));
  }
  return inplace(x, o, "sub_", [alpha](const Tensor& a, const Tensor& b) { return sub(a, b, alpha); },
                 alpha.to_double() == 1.0 ? std::optional(backend::BinaryOp::Sub) : std::nullopt);
}
Tensor& mul_(Tensor& x, const Tensor& o) {
  return inplace(x, o, "mul_", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, backend::BinaryOp::Mul);
}
Tensor& div_(Tensor& x, const Tensor& o) {
  if (!is_floating(x.dtype()))
    throw DtypeError(std::string("div_: true division needs a floating tensor, got ") + dtype_name(x.dtype()));
  return inplace(x, o, "div_", [](const Tensor& a, const Tensor& b) { return div(a, b); }, backend::BinaryOp::Div);
}
Tensor& add_(Tensor& x, Scalar o) { return add_(x, wrap_scalar(o, x)); }
Tensor& mul_(Tensor& x, Scalar o) { return mul_(x, wrap_scalar(o, x)); }

Tensor& apply_inplace_(Tensor& x, const std::function<Tensor(const Tensor&)>& f, const char* op) {
  check_inplace(x, op);
  const bool graph = grad_enabled() && x.requires_grad();
  const Tensor value = f(graph ? x.clone() : x.detach());
  if (value.shape() != x.shape()) {
    throw ShapeError(std::string(op) + ": an in-place result must keep the input's shape " + shape_str(x.shape()) +
                     ", got " + shape_str(value.shape()));
  }
  std::optional<NoGradGuard> ng;  // without a graph, the write records nothing
  if (!graph) ng.emplace();
  return commit(x, value.to(x.dtype()));
}

Tensor& zero_(Tensor& x) { return fill_(x, 0); }

bool is_graph_view(const Tensor& x) {
  return grad_enabled() && x.impl()->autograd && x.impl()->autograd->view_base &&
         Tensor(x.impl()->autograd->view_base).requires_grad();
}

Tensor& fill_(Tensor& x, Scalar value) {
  check_inplace(x, "fill_");
  if (is_graph_view(x)) return commit(x, full_like(x, value));
  Tensor dst = x.detach();
  backend_of(x).fill(dst, value);
  x.storage()->bump_version();
  if (x.requires_grad() && !x.is_leaf() && grad_enabled()) {
    // The filled values no longer depend on anything.
    auto& meta = x.autograd_meta();
    meta.grad_fn = nullptr;
    meta.requires_grad = false;
  }
  return x;
}

// Like PyTorch's copy_, the source may live on another device: the values are copied
// across (the backend copy entry of the non-CPU side), and with history the source is
// moved first through to_device, so its gradient flows back to it on its own device.
Tensor& copy_(Tensor& x, const Tensor& src) {
  check_inplace(x, "copy_");
  const Shape b = broadcast_shapes(x.shape(), src.shape(), "copy_");
  if (b != x.shape()) {
    throw ShapeError("copy_: source of shape " + shape_str(src.shape()) + " cannot be broadcast to " +
                     shape_str(x.shape()));
  }
  const bool cross = src.device() != x.device();
  if ((grad_enabled() && src.requires_grad()) || is_graph_view(x)) {
    return commit(x, cast(cross ? to_device(src, x.device()) : src, x.dtype()));
  }
  Tensor dst = x.detach();
  if (cross) {
    detail::copy_between(detail::expand_view(src.detach(), x.shape()), dst);
  } else {
    backend_of(x).copy(detail::expand_view(src, x.shape()), dst);
  }
  x.storage()->bump_version();
  return x;
}

Tensor& clamp_(Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  check_inplace(x, "clamp_");
  if (grad_enabled() && x.requires_grad()) return commit(x, clamp(x.clone(), lo, hi));
  NoGradGuard ng;
  return commit(x, clamp(x.detach(), lo, hi).to(x.dtype()));
}

Tensor& masked_fill_(Tensor& x, const Tensor& mask, Scalar value) {
  check_inplace(x, "masked_fill_");
  if (broadcast_shapes(x.shape(), mask.shape(), "masked_fill_") != x.shape()) {
    throw ShapeError("masked_fill_: mask of shape " + shape_str(mask.shape()) + " cannot be broadcast to " +
                     shape_str(x.shape()));
  }
  if (grad_enabled() && x.requires_grad()) return commit(x, masked_fill(x.clone(), mask, value));
  NoGradGuard ng;
  return commit(x, masked_fill(x.detach(), mask, value));
}

}  // namespace st
