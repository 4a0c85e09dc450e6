#include "ops/common.h"
#include "spiraltorch/autocast.h"

namespace st {

using detail::backend_of;

namespace {

// How one operand of a batched GEMM sits in memory.
struct GemmOperand {
  Tensor data;
  bool trans = false;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

// Prepares x (batch..., rows, cols), already expanded to `batch` leading dims, for BLAS
// without copying when its layout allows.
GemmOperand prepare(const Tensor& x, int64_t batch) {
  GemmOperand op;
  Tensor t = x;
  const int64_t nd = t.dim();
  auto layout_ok = [&](const Tensor& v) {
    const int64_t rows = v.shape()[nd - 2], cols = v.shape()[nd - 1];
    const int64_t rs = v.strides()[nd - 2], cs = v.strides()[nd - 1];
    if ((cs == 1 || cols == 1) && rs >= std::max<int64_t>(cols, 1)) {
      op.trans = false;
      op.ld = std::max<int64_t>(rs, std::max<int64_t>(cols, 1));
    } else if ((rs == 1 || rows == 1) && cs >= std::max<int64_t>(rows, 1)) {
      op.trans = true;
      op.ld = std::max<int64_t>(cs, std::max<int64_t>(rows, 1));
    } else {
      return false;
    }
    // Leading dims must collapse to one stride (or all be broadcast).
    int64_t stride = -1;
    int64_t expect = -1;
    for (int64_t d = nd - 3; d >= 0; --d) {
      if (v.shape()[d] == 1) continue;
      if (stride == -1) {
        stride = v.strides()[d];
        expect = stride * v.shape()[d];
      } else if (v.strides()[d] != expect && !(stride == 0 && v.strides()[d] == 0)) {
        return false;
      } else {
        expect = v.strides()[d] * v.shape()[d];
      }
    }
    op.batch_stride = stride == -1 ? 0 : stride;
    return true;
  };
  if (!layout_ok(t)) {
    t = t.contiguous();
    layout_ok(t);
  }
  (void)batch;
  op.data = t;
  return op;
}

// Batched matmul on >= 2-d inputs with broadcast batch dims; no autograd.
Tensor matmul_raw(const Tensor& a, const Tensor& b) {
  const int64_t m = a.shape()[a.dim() - 2], k = a.shape()[a.dim() - 1];
  const int64_t k2 = b.shape()[b.dim() - 2], n = b.shape()[b.dim() - 1];
  if (k != k2) {
    throw ShapeError("matmul: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) + " are incompatible");
  }
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch, "matmul");
  Shape a_full = batch, b_full = batch, out_shape = batch;
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  out_shape.insert(out_shape.end(), {m, n});
  const Dtype dt = a.dtype();
  const int64_t nbatch = shape_numel(batch);
  auto& be = backend_of(a);
  // Half types compute in float32 unless the backend multiplies them natively (tensor cores).
  const Dtype compute = is_half(dt) && !be.native_half_gemm() ? Dtype::Float32 : dt;
  // Otherwise the backend may still multiply them with float32 accumulation (oneDNN on CPUs with
  // native bf16 dot products): no float32 copies of the operands and of the result. The half
  // output then also receives the float32 path's result if it declines.
  Tensor half_out;
  if (compute != dt && k > 0 && m * n * nbatch > 0) {
    half_out = Tensor::empty(out_shape, dt, a.device());
    const GemmOperand A = prepare(detail::expand_view(a, a_full), nbatch);
    const GemmOperand B = prepare(detail::expand_view(b, b_full), nbatch);
    if (be.half_matmul(dt, A.trans, B.trans, m, n, k, A.data.raw_data(), A.ld, A.batch_stride, B.data.raw_data(), B.ld,
                       B.batch_stride, half_out.raw_data(), nbatch)) {
      return half_out;
    }
  }
  Tensor out = Tensor::empty(out_shape, compute, a.device());
  if (out.numel() == 0) return detail::cast_raw(out, dt);
  if (k == 0) {
    be.fill(out, 0);
    return detail::cast_raw(out, dt);
  }
  const GemmOperand A = prepare(detail::expand_view(detail::cast_raw(a, compute), a_full), nbatch);
  const GemmOperand B = prepare(detail::expand_view(detail::cast_raw(b, compute), b_full), nbatch);
  be.gemm(compute, A.trans, B.trans, m, n, k, 1.0, A.data.raw_data(), A.ld, A.batch_stride, B.data.raw_data(), B.ld,
          B.batch_stride, 0.0, out.raw_data(), n, m * n, nbatch);
  if (compute == dt) return out;
  be.copy(out, half_out);
  return half_out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  const op_observer::OpEvent event("matmul");
  detail::check_same_device(a, b, "matmul");
  if (autocast::is_enabled(a.device().type)) {  // lower-precision list
    const Tensor al = autocast::to_lower(a), bl = autocast::to_lower(b);
    if (al.dtype() != a.dtype() || bl.dtype() != b.dtype()) return matmul(al, bl);
  }
  if (a.dim() == 0 || b.dim() == 0) {
    throw ShapeError("matmul: both arguments need at least 1 dimension, got shapes " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()));
  }
  if (a.dtype() != b.dtype()) {
    throw DtypeError(std::string("matmul: expected both operands to have the same dtype, got ") +
                     dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
  }
  if (a.dim() == 1 || b.dim() == 1) {
    if (a.shape().back() != (b.dim() == 1 ? b.shape()[0] : b.shape()[b.dim() - 2])) {
      throw ShapeError("matmul: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) + " are incompatible");
    }
    const Tensor a2 = a.dim() == 1 ? unsqueeze(a, 0) : a;
    const Tensor b2 = b.dim() == 1 ? unsqueeze(b, -1) : b;
    Tensor r = matmul(a2, b2);
    if (b.dim() == 1) r = squeeze(r, -1);
    if (a.dim() == 1) r = squeeze(r, r.dim() == 1 && b.dim() == 1 ? 0 : -2);
    event.publish(a, r);
    return r;
  }
  Tensor out = matmul_raw(a, b);
  if (needs_grad({&a, &b})) {
    record(out, "MatmulBackward", {a, b}, [a, b](const Tensor& g) -> std::vector<Tensor> {
      Tensor ga, gb;
      if (b.dim() == 2 && a.dim() >= 2) {
        // A weight-like b: fold a's batch dims into rows so gb is one GEMM, not a batch of
        // them summed afterwards; for b = t(W) with W contiguous, produce gb in b's own
        // (transposed) layout so W's gradient arrives contiguous without a transposing copy.
        if (a.requires_grad()) ga = matmul(g, transpose(b, 0, 1));
        if (b.requires_grad()) {
          const int64_t k = a.shape().back(), n = g.shape().back();
          const Tensor a2 = reshape(a, {-1, k}), g2 = reshape(g, {-1, n});
          const bool b_transposed = b.strides()[0] == 1 && b.strides()[1] == k && k > 1;
          gb = b_transposed ? transpose(matmul(transpose(g2, 0, 1), a2), 0, 1) : matmul(transpose(a2, 0, 1), g2);
        }
        return {ga, gb};
      }
      if (a.requires_grad()) ga = detail::sum_to(matmul(g, transpose(b, -1, -2)), a.shape());
      if (b.requires_grad()) gb = detail::sum_to(matmul(transpose(a, -1, -2), g), b.shape());
      return {ga, gb};
    }, {a, b});
  }
  event.publish(a, out);
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (a.dim() != 3 || b.dim() != 3 || a.shape()[0] != b.shape()[0]) {
    throw ShapeError("bmm: expected two 3-d tensors with the same batch size, got " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()));
  }
  return matmul(a, b);
}

namespace {

Tensor softmax_impl(const Tensor& x_in, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  const op_observer::OpEvent event(name);
  const Tensor x = is_floating(x_in.dtype()) ? x_in : x_in.to(Dtype::Float32);
  if (x.dim() == 0) return log ? zeros_like(x) : ones_like(x);
  dim = wrap_dim(dim, x.dim(), name);
  const Dtype dt = x.dtype();
  const Dtype compute = compute_float(dt);
  // Move `dim` last so each row is contiguous.
  const bool last = dim == x.dim() - 1;
  const Tensor moved = last ? x.detach() : transpose(x.detach(), dim, -1);
  const Tensor src = detail::cast_raw(moved, compute).contiguous();
  const int64_t cols = src.shape().back();
  const int64_t rows = cols == 0 ? 0 : src.numel() / cols;
  Tensor out = Tensor::empty(src.shape(), compute, x.device());
  backend_of(x).softmax(src, rows, cols, log, out);
  if (!last) out = transpose(out, dim, -1).contiguous();
  if (compute != dt) out = detail::cast_raw(out, dt);
  if (needs_grad({&x})) {
    const Tensor y = out.detach();
    record(out, log ? "LogSoftmaxBackward" : "SoftmaxBackward", {x},
           [x, y0 = y, dim, log](const Tensor& g) -> std::vector<Tensor> {
      // Under create_graph, recompute the output with history so second derivatives flow.
      if (!grad_enabled() && g.dtype() == y0.dtype() &&
          (y0.dtype() == Dtype::Float32 || y0.dtype() == Dtype::Float64)) {
        // One fused pass over rows made contiguous along `dim`.
        const bool at_end = dim == y0.dim() - 1;
        const Tensor gm = (at_end ? g : transpose(g, dim, -1)).contiguous();
        const Tensor ym = (at_end ? y0 : transpose(y0, dim, -1)).contiguous();
        const int64_t cols = ym.shape().back();
        const int64_t rows = cols == 0 ? 0 : ym.numel() / cols;
        Tensor dx = Tensor::empty(ym.shape(), ym.dtype(), ym.device());
        if (rows > 0) backend_of(ym).softmax_backward(gm, ym, rows, cols, log, dx);
        return {at_end ? dx : transpose(dx, dim, -1).contiguous()};
      }
      const Tensor y = grad_enabled() ? softmax_impl(x, dim, log) : y0;
      if (log) return {sub(g, mul(exp(y), sum(g, {dim}, true)))};
      return {mul(y, sub(g, sum(mul(g, y), {dim}, true)))};
    }, {out});
  }
  event.publish(x, out);
  return out;
}

}  // namespace

// Both are on autocast's float32 list.
Tensor softmax(const Tensor& x, int64_t dim) { return softmax_impl(autocast::to_float(x), dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_impl(autocast::to_float(x), dim, true); }

}  // namespace st
