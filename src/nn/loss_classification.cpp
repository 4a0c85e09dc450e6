// Classification losses: binary (with logits, on probabilities, hyperbolic), categorical
// (cross-entropy, NLL), focal and the multi-label / multi-class margins. Point-wise ones go
// through loss_fused.h (a backend's fused kernel or the composite); the cross-entropies through
// the backend's fused rows where it has them, else the composite.
#include <cmath>

#include "nn/loss_common.h"
#include "nn/loss_fused.h"
#include "ops/known_range.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/nn/loss_torch_family.h"

namespace st::nn {

using namespace loss_detail;

namespace {

// (1 - t) x + (1 + (pw - 1) t) log(1 + exp(-x)), like PyTorch. log(1 + exp(-x)) as softplus(-x):
// stable (linear past its threshold, off by < 3e-9 there), and its gradient -sigmoid(-x) is right
// at x = 0, where the split form relu(-x) + log1p(exp(-|x|)) takes zero subgradients from both kinks.
Tensor bce_with_logits_composite(const Tensor& x, const Tensor& t, const Tensor& pw) {
  const Tensor sp = softplus(neg(x), 1.0, 20.0);
  const Tensor one_minus_t = sub(ones_like(t), t);
  if (!pw.defined()) return add(mul(one_minus_t, x), sp);
  const Tensor coef = add(mul(sub(pw, 1.0), t), 1.0);
  return add(mul(one_minus_t, x), mul(coef, sp));
}

struct ClassLayout {
  int64_t outer = 1, classes = 1, inner = 1;
  Shape row_shape;  // shape of the per-row loss
};

ClassLayout class_layout(const Tensor& x, const char* op) {
  ClassLayout L;
  if (x.dim() == 0) throw ShapeError(std::string(op) + ": input must have at least one dimension");
  if (x.dim() == 1) {
    L.classes = x.size(0);
    return L;
  }
  L.outer = x.size(0);
  L.classes = x.size(1);
  L.row_shape.push_back(L.outer);
  for (int64_t d = 2; d < x.dim(); ++d) {
    L.inner *= x.size(d);
    L.row_shape.push_back(x.size(d));
  }
  return L;
}

void check_class_weight(const Tensor& weight, const ClassLayout& L, const char* op) {
  if (!weight.defined()) return;
  if (weight.dim() != 1 || weight.size(0) != L.classes) {
    throw ShapeError(std::string(op) + ": weight must have shape (" + std::to_string(L.classes) + ",), got " +
                     shape_str(weight.shape()));
  }
}

void check_index_target(const Tensor& target, const ClassLayout& L, const char* op) {
  if (target.shape() != L.row_shape) {
    throw ShapeError(std::string(op) + ": target shape " + shape_str(target.shape()) + " does not match " +
                     shape_str(L.row_shape) + " expected for class indices");
  }
}

// Per-row losses of (N, C) logits against in-range int64 targets through the backend's fused
// kernel (logsumexp minus the target's logit; softmax - onehot in the backward), keeping only
// the logits and each row's logsumexp; undefined where the backend has no such kernel. Each row's
// loss is multiplied by `scale` (1/N: their sum is the mean, with no division of its own).
Tensor fused_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale = 1.0) {
  if (!fused_losses_enabled()) return Tensor();
  auto& be = detail::backend_of(x);
  const Tensor xc = x.detach().contiguous(), tc = t.contiguous();
  const Dtype stat = x.dtype() == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;
  Tensor rows = Tensor::empty({x.size(0)}, stat, x.device()), lse = Tensor::empty({x.size(0)}, stat, x.device());
  Tensor no_grad_here;  // the backward forms it, if asked
  if (!be.cross_entropy_rows(xc, tc, ignore_index, scale, rows, lse, no_grad_here)) return Tensor();
  if (!needs_grad({&x})) return rows;
  record(rows, "CrossEntropyBackward", {x},
         [rx = GradientRoute(x), xc, tc, lse, ignore_index, scale](const Tensor& g) -> std::vector<Tensor> {
    // A gradient broadcast from one number (the mean's) goes in as that number: no expanded copy.
    const bool one = g.dim() == 1 && g.size(0) > 1 && g.strides()[0] == 0;
    const Tensor gr =
        detail::cast_raw(one ? Tensor::from_storage(g.storage(), {1}, {1}, g.offset(), g.dtype()) : g, lse.dtype())
            .contiguous();
    if (grad_enabled()) {  // create_graph: the same gradient from differentiable ops
      const Tensor xa = rx.attach(xc);
      const Tensor valid = ne(tc, wrap_scalar(ignore_index, tc));
      const Tensor onehot = one_hot(where(valid, tc, zeros_like(tc)), xc.size(1)).to(xc.dtype());
      const Tensor weight = mul(mul(unsqueeze(g, 1), unsqueeze(valid.to(xc.dtype()), 1)), scale);
      return {mul(sub(softmax(xa, 1), onehot), weight)};
    }
    Tensor dx = Tensor::empty(xc.shape(), xc.dtype(), xc.device());
    detail::backend_of(xc).cross_entropy_rows_backward(xc, tc, lse, gr, ignore_index, scale, dx);
    return {dx};
  }, {xc, lse});
  return rows;
}

// The softmax cross-entropy (or, for log_probs_in, the NLL) of checked operands on every
// device: (N, C) integer targets with neither weight nor label smoothing take the backend's fused
// rows where it has them; the rest, and backends without them, compose ops (which also give the
// gradient, create_graph included).
Tensor class_loss(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                  Reduction reduction, double ls, bool log_probs_in, Dtype result_dtype) {
  const char* op = log_probs_in ? "nll_loss" : "cross_entropy";
  const bool batched = logits.dim() > 1;
  const Tensor x = batched ? logits : unsqueeze(logits, 0);
  const bool index_mode = !is_floating(target.dtype());
  const Tensor tg = batched ? target : unsqueeze(target, 0);
  const int64_t C = x.size(1);
  Tensor loss, denom, t, valid, safe;
  bool mean_folded = false;
  // Targets copied from the host carry their range (ops/known_range.h): inside [0, C) with the
  // ignore index outside it, every target counts and is in range, so the fused path needs
  // neither the range check's host read (a sync) nor the mask.
  if (index_mode) {
    t = tg.to(Dtype::Int64);
    const bool all_counted = (ignore_index < 0 || ignore_index >= C) && st::detail::known_within(t, 0, C);
    const bool fusable = !log_probs_in && !weight.defined() && ls == 0.0 && x.dim() == 2;
    const bool tried = fusable && all_counted;
    // the mean over N counted rows: each row's loss comes scaled by 1/N, and their sum is the mean
    mean_folded = tried && reduction == Reduction::Mean && x.size(0) > 0;
    if (tried) loss = fused_rows(x, t, ignore_index, mean_folded ? 1.0 / static_cast<double>(x.size(0)) : 1.0);
    if (!loss.defined()) mean_folded = false;
    if (!loss.defined()) {
      valid = ne(t, wrap_scalar(ignore_index, t));
      safe = where(valid, t, zeros_like(t));
      // no host reads inside a CUDA graph capture
      if (!all_counted && safe.numel() > 0 && !st::detail::capturing(safe.device())) {
        const auto [lo, hi] = st::detail::index_range(safe);
        for (const int64_t v : {lo, hi}) {
          if (v < 0 || v >= C) {
            throw IndexError(std::string(op) + ": target " + std::to_string(v) + " is out of bounds for " +
                             std::to_string(C) + " classes");
          }
        }
      }
      if (fusable && !tried) {
        loss = fused_rows(x, t, ignore_index);
        if (loss.defined()) denom = sum(valid.to(loss.dtype()));
      }
    }
  }
  if (!loss.defined()) {
    const Tensor logp = log_probs_in ? x : log_softmax(autocast::to_float(x), 1);
    Shape wshape(x.dim(), 1);
    wshape[1] = C;
    const Tensor wb = weight.defined() ? reshape(weight.to(logp.dtype()), wshape) : Tensor();
    if (index_mode) {
      const Tensor picked = squeeze(gather(logp, 1, unsqueeze(safe, 1)), 1);
      const Tensor validf = valid.to(logp.dtype());
      Tensor wt = validf;
      if (weight.defined()) {
        const Tensor wsel =
            reshape(index_select(weight.to(logp.dtype()), 0, reshape(safe, {safe.numel()})), safe.shape());
        wt = mul(wsel, validf);
      }
      loss = mul(neg(picked), wt);
      if (ls > 0.0) {
        const Tensor smooth = neg(sum(wb.defined() ? mul(logp, wb) : logp, {1}));
        loss = add(mul(loss, 1.0 - ls), mul(mul(smooth, validf), ls / static_cast<double>(C)));
      }
      denom = sum(wt);
    } else {
      Tensor pt = tg.to(logp.dtype());
      if (ls > 0.0) pt = add(mul(pt, 1.0 - ls), ls / static_cast<double>(C));
      const Tensor prod = mul(logp, pt);
      loss = neg(sum(wb.defined() ? mul(prod, wb) : prod, {1}));
    }
  }
  if (!batched) loss = squeeze(loss, 0);
  Tensor out;
  switch (reduction) {
    case Reduction::None:
      out = loss;
      break;
    case Reduction::Sum:
      out = sum(loss);
      break;
    case Reduction::Mean:
      // every target counted: the mean over the targets, as PyTorch divides by their number
      out = mean_folded ? sum(loss) : index_mode && denom.defined() ? div(sum(loss), denom) : mean(loss);
      break;
  }
  return out.dtype() == result_dtype ? out : out.to(result_dtype);
}

}  // namespace

// ---------------------------------------------------------------- binary

Tensor binary_cross_entropy_with_logits(const Tensor& logits_in, const Tensor& target_in, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  const Tensor logits = autocast::to_float(logits_in), target = autocast::to_float(target_in);  // float32 list
  check_pointwise("binary_cross_entropy_with_logits", logits, target, pos_weight);
  Tensor l =
      fused_or_composite(backend::PointwiseLoss::BceWithLogits, "BinaryCrossEntropyWithLogitsBackward", logits, target,
                         pos_weight, 0.0, 0.0, [&] { return bce_with_logits_composite(logits, target, pos_weight); });
  if (weight.defined()) l = mul(l, weight);
  return reduce(l, reduction);
}

Tensor hyperbolic_cross_entropy(const Tensor& logits, const Tensor& target, double curvature, Reduction reduction,
                                double epsilon) {
  if (!std::isfinite(curvature) || !(curvature < 0)) {
    throw ValueError("hyperbolic_cross_entropy: curvature must be negative and finite, got " +
                     std::to_string(curvature));
  }
  if (!(epsilon >= 0 && epsilon < 0.5)) {
    throw ValueError("hyperbolic_cross_entropy: epsilon must be in [0, 0.5), got " + std::to_string(epsilon));
  }
  check_pointwise("hyperbolic_cross_entropy", logits, target);
  const double s = std::sqrt(-curvature);
  // BCE on the scaled logits; clamp passes the gradient inside [eps, 1 - eps] only.
  return reduce(fused_or_composite(backend::PointwiseLoss::HyperbolicBce, "HyperbolicCrossEntropyBackward", logits,
                                   target, Tensor(), s, epsilon,
                                   [&] {
    const Tensor t = epsilon > 0 ? clamp(target, epsilon, 1.0 - epsilon) : target;
    return bce_with_logits_composite(mul(logits, s), t, Tensor());
  }),
                reduction);
}

// ---------------------------------------------------------------- BCE

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target_in, const Tensor& weight, Reduction reduction) {
  const char* op = "binary_cross_entropy";
  check_floating(input, op, "input");
  check_defined(target_in, op, "target");
  check_same_shape(input, target_in, op);
  if (weight.defined()) check_weight(weight, input.shape(), input, op);
  const Tensor target = as_float(target_in, input);
  Tensor x, t, lx, l1x, loss;
  {
    NoGradGuard ng;
    x = input.detach();
    t = target.detach();
    if (x.numel() > 0 && (any(lt(x, zeros_of(x))).item() != 0.0 || any(gt(x, ones_like(x))).item() != 0.0)) {
      throw ValueError(std::string(op) + ": input values must lie in [0, 1], got min " + num(min(x).item()) +
                       " and max " + num(max(x).item()));
    }
    lx = clamp(log(x), -100.0, std::nullopt);
    l1x = clamp(log(rsub(x, 1.0)), -100.0, std::nullopt);
    loss = neg(add(mul(t, lx), mul(rsub(t, 1.0), l1x)));
    if (weight.defined()) loss = mul(loss, weight.detach());
  }
  if (needs_grad({&input, &target})) {
    const Tensor w = weight.defined() ? weight.detach() : Tensor();
    const bool gx = input.requires_grad(), gt_ = target.requires_grad();
    const Dtype xd = input.dtype(), td = target.dtype();
    record(loss, "BinaryCrossEntropyBackward", {input, target},
           [x, t, lx, l1x, w, gx, gt_, xd, td](const Tensor& g) -> std::vector<Tensor> {
      const Tensor gw = w.defined() ? mul(g, w) : g;
      Tensor dx, dt;
      // torch's EPSILON is the float 1e-12f, also in float64.
      const double floor_ = static_cast<double>(1e-12f);
      if (gx) dx = div(mul(gw, sub(x, t)), clamp(mul(x, rsub(x, 1.0)), floor_, std::nullopt)).to(xd);
      if (gt_) dt = mul(gw, sub(l1x, lx)).to(td);
      return {dx, dt};
    });
  }
  return reduce(loss, reduction);
}

// ---------------------------------------------------------------- categorical

Tensor cross_entropy(const Tensor& logits_in, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     Reduction reduction, double label_smoothing) {
  // autocast's float32 list. Half logits with index targets, no weight and no smoothing stay as
  // they are: the fused rows read them in float32, so loss and gradient equal the float32 cast's
  // bit for bit without its (N, C) copy; the composite path (backends without the fused rows)
  // casts them there.
  const Dtype in = logits_in.dtype();
  const bool fused_reads_half = autocast::is_enabled(logits_in.device().type) &&
                                (in == Dtype::Float16 || in == Dtype::BFloat16) && target.defined() &&
                                !is_floating(target.dtype()) && !weight.defined() && label_smoothing == 0.0 &&
                                logits_in.dim() == 2;
  const Tensor logits = fused_reads_half ? logits_in : autocast::to_float(logits_in);
  const char* op = "cross_entropy";
  check_floating(logits, op, "input");
  if (!target.defined()) throw ValueError("cross_entropy: target is undefined");
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw ValueError("cross_entropy: label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
  }
  const ClassLayout L = class_layout(logits, op);
  const bool index_mode = !is_floating(target.dtype());
  if (index_mode) {
    if (target.dtype() == Dtype::Bool)
      throw DtypeError("cross_entropy: target must be int64 indices or floating probabilities");
    check_index_target(target, L, op);
  } else if (target.shape() != logits.shape()) {
    throw ShapeError("cross_entropy: probability target shape " + shape_str(target.shape()) +
                     " must match input shape " + shape_str(logits.shape()));
  }
  check_class_weight(weight, L, op);
  return class_loss(logits, target, weight, ignore_index, reduction, label_smoothing, false,
                    fused_reads_half ? Dtype::Float32 : logits.dtype());
}

Tensor nll_loss(const Tensor& log_probs_in, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                Reduction reduction) {
  const Tensor log_probs = autocast::to_float(log_probs_in);  // autocast's float32 list
  const char* op = "nll_loss";
  check_floating(log_probs, op, "input");
  if (!target.defined()) throw ValueError("nll_loss: target is undefined");
  if (is_floating(target.dtype()) || target.dtype() == Dtype::Bool) {
    throw DtypeError("nll_loss: target must hold integer class indices");
  }
  const ClassLayout L = class_layout(log_probs, op);
  check_index_target(target, L, op);
  check_class_weight(weight, L, op);
  return class_loss(log_probs, target, weight, ignore_index, reduction, 0.0, true, log_probs.dtype());
}

// ---------------------------------------------------------------- focal and margins

Tensor sigmoid_focal_loss(const Tensor& logits, const Tensor& target, double alpha, double gamma, Reduction reduction) {
  if (!(gamma >= 0)) throw ValueError("sigmoid_focal_loss: gamma must be >= 0, got " + std::to_string(gamma));
  if (alpha > 1.0)
    throw ValueError("sigmoid_focal_loss: alpha must be <= 1 (negative disables it), got " + std::to_string(alpha));
  const Tensor p = sigmoid(logits);
  const Tensor ce = binary_cross_entropy_with_logits(logits, target, {}, {}, Reduction::None);
  const Tensor p_t = add(mul(p, target), mul(rsub(p, 1.0), rsub(target, 1.0)));
  Tensor loss = gamma == 0.0 ? ce : mul(ce, pow(rsub(p_t, 1.0), gamma));
  if (alpha >= 0) {
    const Tensor alpha_t = add(mul(target, alpha), mul(rsub(target, 1.0), 1.0 - alpha));
    loss = mul(alpha_t, loss);
  }
  return reduce(loss, reduction);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  const char* op = "soft_margin_loss";
  check_floating(input, op, "input");
  check_defined(target, op, "target");
  check_same_shape(input, target, op);
  return reduce(neg(logsigmoid(mul(input, as_float(target, input)))), reduction);
}

// ---------------------------------------------------------------- multi-class margins

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction) {
  const char* op = "multilabel_soft_margin_loss";
  check_floating(input, op, "input");
  check_defined(target, op, "target");
  if (input.dim() == 0) throw ShapeError(std::string(op) + ": input needs a class dim, got a 0-d tensor");
  check_same_shape(input, target, op);
  if (weight.defined()) check_weight(weight, input.shape(), input, op);
  const Tensor t = as_float(target, input);
  Tensor loss = neg(add(mul(t, logsigmoid(input)), mul(rsub(t, 1.0), logsigmoid(neg(input)))));
  if (weight.defined()) loss = mul(loss, weight);
  const int64_t classes = input.shape().back();
  return reduce(div(sum(loss, {-1}), static_cast<double>(classes)), reduction);
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p, double margin, const Tensor& weight,
                         Reduction reduction) {
  const char* op = "multi_margin_loss";
  if (p != 1 && p != 2)
    throw ValueError(std::string(op) + ": only p == 1 and p == 2 are supported, got " + std::to_string(p));
  check_floating(input, op, "input");
  check_defined(target, op, "target");
  if (input.dim() != 1 && input.dim() != 2) {
    throw ShapeError(std::string(op) + ": expected input of shape (N, C) or (C,), got " + shape_str(input.shape()));
  }
  const int64_t n = input.dim() == 2 ? input.shape()[0] : 1;
  const int64_t c = input.shape().back();
  if (c == 0) throw ShapeError(std::string(op) + ": input has no classes, shape " + shape_str(input.shape()));
  if (target.dtype() != Dtype::Int64 && target.dtype() != Dtype::Int32) {
    throw DtypeError(std::string(op) + ": target must hold integer class indices, got " + dtype_name(target.dtype()));
  }
  if (target.numel() != n || target.dim() != input.dim() - 1) {
    throw ShapeError(std::string(op) + ": target of shape " + shape_str(target.shape()) +
                     " does not match the input of shape " + shape_str(input.shape()));
  }
  detail::check_same_device(input, target, op);
  if (weight.defined()) {
    detail::check_same_device(input, weight, op);
    if (weight.dim() != 1 || weight.shape()[0] != c) {
      throw ShapeError(std::string(op) + ": weight must have shape (" + std::to_string(c) + ",), got " +
                       shape_str(weight.shape()));
    }
  }
  const Tensor idx = reshape(target.to(Dtype::Int64), {n});
  if (n > 0) {
    NoGradGuard ng;
    const double lo = min(idx).item(), hi = max(idx).item();
    if (lo < 0 || hi >= static_cast<double>(c)) {
      throw IndexError(std::string(op) + ": target " + num(lo < 0 ? lo : hi) + " is out of range for " +
                       std::to_string(c) + " classes");
    }
  }
  const Tensor x = reshape(input, {n, c});
  const Tensor xy = gather(x, 1, reshape(idx, {n, 1}));
  Tensor z = clamp(add(sub(x, xy), margin), 0.0, std::nullopt);
  if (p == 2) z = mul(z, z);
  z = where(cast(one_hot(idx, c), Dtype::Bool), zeros_of(z), z);  // the true class does not count
  if (weight.defined()) z = mul(z, reshape(index_select(weight, 0, idx), {n, 1}));
  Tensor loss = div(sum(z, {1}), static_cast<double>(c));
  if (input.dim() == 1) loss = reshape(loss, {});
  return reduce(loss, reduction);
}

}  // namespace st::nn
