// linear_cross_entropy: cross_entropy(linear(input, weight, bias), target) for a language model's
// head without its (rows, classes) logits in memory. The rows go through in chunks: each chunk's
// logits are formed, their log-sum-exp, loss and gradient (softmax - onehot) taken by the backend's
// fused cross-entropy rows in one pass, and that gradient multiplied back into the input's and the
// weight's gradients before the next chunk's logits exist. What the node keeps for the backward is
// those gradients (the size of the input and of the weight), which the backward only scales by the
// incoming gradient; no logits outlive their chunk.
//
// The logits of GPT-2's head (16384 rows x 50304 classes) are 1.6 GB in bfloat16, and the
// composite keeps them from the forward to the backward and adds a gradient of the same size:
// here one chunk of each is live (Backend::stream_chunk_rows says how many rows).
#include <algorithm>
#include <string>
#include <vector>

#include "backend/capture.h"
#include "nn/loss_fused.h"
#include "ops/common.h"
#include "ops/known_range.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/loss.h"

namespace st::nn {

namespace {

constexpr const char* kOp = "linear_cross_entropy";
void check_args(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& target,
                Reduction reduction, int64_t chunk_rows) {
  const std::string op(kOp);
  if (!input.defined() || !weight.defined() || !target.defined()) {
    throw ValueError(op + ": input, weight and target must be defined");
  }
  if (reduction == Reduction::None) {
    throw ValueError(op +
                     ": reduction must be 'mean' or 'sum' (the weight's gradient sums over the rows, so "
                     "per-row losses cannot be weighted afterwards); got 'none'");
  }
  if (chunk_rows < 0)
    throw ValueError(op + ": chunk_rows must be >= 0 (0: automatic), got " + std::to_string(chunk_rows));
  if (weight.dim() != 2) {
    throw ShapeError(op + ": weight must be 2-D (classes, features), got shape " + shape_str(weight.shape()));
  }
  if (input.dim() < 1 || input.shape().back() != weight.size(1)) {
    throw ShapeError(op + ": input of shape " + shape_str(input.shape()) + " does not match weight of shape " +
                     shape_str(weight.shape()) + " (expected last dim " + std::to_string(weight.size(1)) + ")");
  }
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != weight.size(0))) {
    throw ShapeError(op + ": bias must have shape (" + std::to_string(weight.size(0)) + ",), got " +
                     shape_str(bias.shape()));
  }
  if (is_floating(target.dtype()) || target.dtype() == Dtype::Bool) {
    throw DtypeError(op + ": target must hold integer class indices, got " + dtype_name(target.dtype()));
  }
  const Shape rows(input.shape().begin(), input.shape().end() - 1);
  if (target.shape() != rows) {
    throw ShapeError(op + ": target shape " + shape_str(target.shape()) + " does not match the input's rows " +
                     shape_str(rows));
  }
}

// Targets outside [0, classes) other than ignore_index raise, as cross_entropy's do (a host read,
// skipped where the targets' range is known or a CUDA graph is being captured).
void check_target_range(const Tensor& t, int64_t classes, int64_t ignore_index) {
  if (t.numel() == 0 || st::detail::known_within(t, 0, classes) || st::detail::capturing(t.device())) return;
  const Tensor safe = where(ne(t, wrap_scalar(ignore_index, t)), t, zeros_like(t));
  const auto [lo, hi] = st::detail::index_range(safe);
  for (const int64_t v : {lo, hi}) {
    if (v < 0 || v >= classes) {
      throw IndexError(std::string(kOp) + ": target " + std::to_string(v) + " is out of bounds for " +
                       std::to_string(classes) + " classes");
    }
  }
}

// dw (classes, features) = dl^T x (first chunk) or += it, in dw's dtype (float32 for autocast's
// master weights): the backend's GEMM writes or adds in place where it can (no per-chunk copy).
void add_weight_gradient(const Tensor& dl, const Tensor& x, Tensor& dw, bool first) {
  Tensor none;
  if (detail::backend_of(dl).linear_bias_backward_weight(dl, x, dw, none, !first)) return;
  const Tensor part = matmul(t(dl), x).to(dw.dtype());
  if (first) {
    dw = part;
  } else {
    add_(dw, part);
  }
}

}  // namespace

Tensor linear_cross_entropy(const Tensor& input_in, const Tensor& weight, const Tensor& bias, const Tensor& target,
                            int64_t ignore_index, Reduction reduction, int64_t chunk_rows) {
  check_args(input_in, weight, bias, target, reduction, chunk_rows);
  const int64_t features = weight.size(1), classes = weight.size(0);
  const auto composite = [&] {
    return cross_entropy(linear(reshape(input_in, {-1, features}), weight, bias), reshape(target, {-1}), {},
                         ignore_index, reduction);
  };
  const Tensor input = autocast::to_lower(input_in);
  const Dtype dt = input.dtype();
  const DeviceType type = input.device().type;
  // autocast's float32 master weights: multiplied as region-dtype copies, gradients in float32
  const bool master = weight.dtype() == Dtype::Float32 && (dt == Dtype::Float16 || dt == Dtype::BFloat16) &&
                      autocast::is_enabled(type) && autocast::dtype(type) == dt;
  const Dtype pdt = master ? Dtype::Float32 : dt;
  if (!is_floating(dt) || weight.dtype() != pdt || (bias.defined() && bias.dtype() != pdt) ||
      weight.device() != input.device() || (bias.defined() && bias.device() != input.device()) ||
      target.device() != input.device() || !loss_detail::fused_losses_enabled()) {
    return composite();  // mismatches raise there, with cross_entropy's and linear's messages
  }
  if (input.numel() == 0) return composite();  // no rows: the composite's empty reduction
  const Tensor x = reshape(input.detach(), {-1, features}).contiguous();
  const Tensor tg = reshape(target, {-1}).to(Dtype::Int64).contiguous();
  check_target_range(tg, classes, ignore_index);
  const int64_t rows = x.size(0);
  const bool want_x = input.requires_grad(), want_w = weight.requires_grad(),
             want_b = bias.defined() && bias.requires_grad();
  const bool want = grad_enabled() && (want_x || want_w || want_b);
  const Dtype stat = dt == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;
  Tensor loss_sum, dx, dw, db;
  {
    NoGradGuard no_grad;  // the chunks record nothing: this op is one node
    const Tensor w = master ? weight.detach().to(dt) : weight.detach().contiguous();
    const Tensor b = !bias.defined() ? Tensor() : master ? bias.detach().to(dt) : bias.detach().contiguous();
    auto& be = detail::backend_of(x);
    const int64_t per =
        std::max<int64_t>(1, std::min(rows, chunk_rows > 0 ? chunk_rows : be.stream_chunk_rows(classes)));
    if (want_x) dx = Tensor::empty({rows, features}, dt, x.device());
    // the weight gradient sums over chunks: in float32 when there are several and dt is a half type
    const bool half = dt == Dtype::Float16 || dt == Dtype::BFloat16;
    const Dtype acc = per < rows && half ? Dtype::Float32 : pdt;
    if (want_w) dw = Tensor::empty({classes, features}, acc, x.device());
    std::vector<Tensor> losses;
    for (int64_t r0 = 0; r0 < rows; r0 += per) {
      const int64_t n = std::min(per, rows - r0);
      const Tensor xc = narrow(x, 0, r0, n), tc = narrow(tg, 0, r0, n);
      // each chunk's logits and gradient are freed before the next chunk's are allocated
      const Tensor logits = linear(xc, w, b);
      Tensor lrows = Tensor::empty({n}, stat, x.device()), lse = Tensor::empty({n}, stat, x.device());
      // the rows' gradient (softmax - onehot) in the same pass as their loss
      Tensor dl = want ? Tensor::empty(logits.shape(), dt, x.device()) : Tensor();
      if (!be.cross_entropy_rows(logits, tc, ignore_index, 1.0, lrows, lse, dl)) {
        if (r0 == 0) return composite();  // this backend has no fused rows for these logits
        throw SpiralError(std::string(kOp) + ": the backend declined chunk rows it took before");
      }
      losses.push_back(lrows);
      if (!want) continue;
      if (want_x) {
        Tensor rows_dx = narrow(dx, 0, r0, n);
        copy_(rows_dx, matmul(dl, w));
      }
      if (want_w) add_weight_gradient(dl, xc, dw, r0 == 0);
      if (want_b) {
        const Tensor part = sum(dl, {0}).to(pdt);
        db = r0 == 0 ? part : add(db, part);
      }
    }
    loss_sum = sum(cat(losses));
    if (dw.defined()) dw = dw.to(pdt);
  }
  // mean: over the targets that count (not ignore_index), as cross_entropy divides
  const Tensor count = reduction == Reduction::Mean ? sum(ne(tg, wrap_scalar(ignore_index, tg)).to(stat)) : Tensor();
  Tensor loss = count.defined() ? div(loss_sum, count) : loss_sum;
  const auto result = [&](const Tensor& l) {  // cross_entropy's result dtype: float32 under autocast, else dt
    return autocast::is_enabled(type) || l.dtype() == dt ? l : l.to(dt);
  };
  if (!want) return result(loss);
  record(loss, "LinearCrossEntropyBackward", {input, weight, bias},
         [dx, dw, db, count, in_shape = input.shape()](const Tensor& g) -> std::vector<Tensor> {
    if (grad_enabled()) {
      throw ValueError(std::string(kOp) +
                       ": create_graph is not supported (the gradient is formed in the forward, chunk by chunk); "
                       "compose linear and cross_entropy for higher-order gradients");
    }
    const Tensor s = count.defined() ? div(g.to(count.dtype()), count) : g;
    // the scale joins at its own precision; the product rounds once to the gradient's dtype
    const auto scaled = [&](const Tensor& v) { return v.defined() ? mul(v, s).to(v.dtype()) : Tensor(); };
    return {dx.defined() ? reshape(scaled(dx), in_shape) : Tensor(), scaled(dw), scaled(db)};
  });
  return result(loss);
}

}  // namespace st::nn
