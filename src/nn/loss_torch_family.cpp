// torch.nn's remaining losses, composed from differentiable ops (so every device and
// autograd come for free). Only binary_cross_entropy records its own node: torch's
// gradient w (x - t) / max(x (1 - x), 1e-12) stays finite at x = 0 and x = 1, where the
// chain rule through the clamped logs would give 0 * inf.
#include "spiraltorch/nn/loss_torch_family.h"

#include <cmath>
#include <numbers>
#include <sstream>

#include "ops/common.h"

namespace st::nn {

namespace {

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

Tensor reduce(const Tensor& l, Reduction r) {
  switch (r) {
    case Reduction::Mean:
      return mean(l);
    case Reduction::Sum:
      return sum(l);
    case Reduction::None:
      break;
  }
  return l;
}

void check_floating(const Tensor& t, const char* op, const char* what) {
  if (!t.defined()) throw ValueError(std::string(op) + ": " + what + " is undefined");
  if (!is_floating(t.dtype())) {
    throw DtypeError(std::string(op) + ": " + what + " must be a floating tensor, got " + dtype_name(t.dtype()));
  }
}

void check_defined(const Tensor& t, const char* op, const char* what) {
  if (!t.defined()) throw ValueError(std::string(op) + ": " + what + " is undefined");
}

void check_same_shape(const Tensor& a, const Tensor& b, const char* op, const char* an = "input",
                      const char* bn = "target") {
  if (a.shape() != b.shape()) {
    throw ShapeError(std::string(op) + ": " + an + " shape " + shape_str(a.shape()) + " and " + bn + " shape " +
                     shape_str(b.shape()) + " differ");
  }
  detail::check_same_device(a, b, op);
}

// Broadcastable operands (ShapeError naming `op` otherwise); returns the result shape.
Shape check_broadcast(const Tensor& a, const Tensor& b, const char* op) {
  detail::check_same_device(a, b, op);
  return broadcast_shapes(a.shape(), b.shape(), op);
}

// A label tensor in the input's floating dtype (integer and bool labels are common).
Tensor as_float(const Tensor& y, const Tensor& like) { return is_floating(y.dtype()) ? y : y.to(like.dtype()); }

// Weight that broadcasts against `shape` without enlarging it.
void check_weight(const Tensor& w, const Shape& shape, const Tensor& input, const char* op) {
  detail::check_same_device(input, w, op);
  if (broadcast_shapes(w.shape(), shape, op) != shape) {
    throw ShapeError(std::string(op) + ": weight of shape " + shape_str(w.shape()) +
                     " does not broadcast to the input shape " + shape_str(shape));
  }
}

Tensor zeros_of(const Tensor& like) { return zeros_like(like); }

}  // namespace

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

// ---------------------------------------------------------------- KL divergence

Tensor kl_div(const Tensor& input, const Tensor& target_in, const std::string& reduction, bool log_target) {
  const char* op = "kl_div";
  if (reduction != "mean" && reduction != "batchmean" && reduction != "sum" && reduction != "none") {
    throw ValueError(std::string(op) + ": reduction must be 'mean', 'batchmean', 'sum' or 'none', got '" + reduction +
                     "'");
  }
  check_floating(input, op, "input");
  check_defined(target_in, op, "target");
  check_broadcast(input, target_in, op);
  const Tensor target = as_float(target_in, input);
  Tensor loss;
  if (log_target) {
    loss = mul(exp(target), sub(target, input));
  } else {
    // xlogy(t, t): 0 at t == 0; log of 1 there keeps the unselected branch's gradient finite.
    const Tensor is0 = eq(target, zeros_of(target));
    const Tensor tlogt = where(is0, zeros_of(target), mul(target, log(where(is0, ones_like(target), target))));
    loss = sub(tlogt, mul(target, input));
  }
  if (reduction == "none") return loss;
  if (reduction == "sum") return sum(loss);
  if (reduction == "mean") return mean(loss);
  return input.dim() == 0 ? sum(loss) : div(sum(loss), static_cast<double>(input.shape()[0]));
}

// ---------------------------------------------------------------- point-wise margins

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  const char* op = "smooth_l1_loss";
  if (!(beta >= 0) || !std::isfinite(beta)) {
    throw ValueError(std::string(op) + ": beta must be >= 0 and finite, got " + num(beta));
  }
  check_floating(input, op, "input");
  check_defined(target, op, "target");
  check_same_shape(input, target, op);
  if (beta == 0.0) return l1_loss(input, target, reduction);
  // Huber with delta = beta is beta times the smooth L1 loss (and runs a fused kernel).
  return reduce(div(huber_loss(input, target, Reduction::None, beta), beta), reduction);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  const char* op = "soft_margin_loss";
  check_floating(input, op, "input");
  check_defined(target, op, "target");
  check_same_shape(input, target, op);
  return reduce(neg(logsigmoid(mul(input, as_float(target, input)))), reduction);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           Reduction reduction) {
  const char* op = "margin_ranking_loss";
  check_floating(input1, op, "input1");
  check_floating(input2, op, "input2");
  check_defined(target, op, "target");
  if (input1.dim() != input2.dim() || input1.dim() != target.dim()) {
    throw ShapeError(std::string(op) + ": input1 " + shape_str(input1.shape()) + ", input2 " +
                     shape_str(input2.shape()) + " and target " + shape_str(target.shape()) +
                     " must have the same number of dimensions");
  }
  check_broadcast(input1, input2, op);
  check_broadcast(input1, target, op);
  broadcast_shapes(broadcast_shapes(input1.shape(), input2.shape(), op), target.shape(), op);
  const Tensor y = as_float(target, input1);
  return reduce(clamp(add(mul(neg(y), sub(input1, input2)), margin), 0.0, std::nullopt), reduction);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin, Reduction reduction) {
  const char* op = "hinge_embedding_loss";
  check_floating(input, op, "input");
  check_defined(target, op, "target");
  check_broadcast(input, target, op);
  const Tensor y = as_float(target, input);
  const Tensor zero = zeros_of(input);
  // torch's rule: the margin term wherever y != 1, the input itself wherever y != -1.
  const Tensor margin_term = where(ne(y, ones_like(y)), clamp(rsub(input, margin), 0.0, std::nullopt), zero);
  const Tensor self_term = where(ne(y, neg(ones_like(y))), input, zero);
  return reduce(add(margin_term, self_term), reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             Reduction reduction) {
  const char* op = "cosine_embedding_loss";
  check_floating(input1, op, "input1");
  check_floating(input2, op, "input2");
  check_defined(target, op, "target");
  if (target.dim() > 1) {
    throw ShapeError(std::string(op) + ": expected a 0-d or 1-d target, got shape " + shape_str(target.shape()));
  }
  if (input1.shape() != input2.shape() || input1.dim() != target.dim() + 1 ||
      (target.dim() == 1 && input1.shape()[0] != target.shape()[0])) {
    throw ShapeError(std::string(op) + ": inputs " + shape_str(input1.shape()) + " and " + shape_str(input2.shape()) +
                     " with target " + shape_str(target.shape()) +
                     " do not match (expected (N, D), (N, D), (N) or (D), (D), ())");
  }
  detail::check_same_device(input1, input2, op);
  detail::check_same_device(input1, target, op);
  constexpr double kEps = 1e-12;  // torch's EPSILON inside the magnitudes
  const Dims d{-1};
  const Tensor prod = sum(mul(input1, input2), d);
  const Tensor m1 = add(sum(mul(input1, input1), d), kEps);
  const Tensor m2 = add(sum(mul(input2, input2), d), kEps);
  const Tensor cos = div(prod, sqrt(mul(m1, m2)));
  const Tensor y = as_float(target, input1);
  const Tensor zero = zeros_of(cos);
  const Tensor pos = where(eq(y, ones_like(y)), rsub(cos, 1.0), zero);
  const Tensor negt = where(eq(y, neg(ones_like(y))), clamp(sub(cos, margin), 0.0, std::nullopt), zero);
  return reduce(add(pos, negt), reduction);
}

// ---------------------------------------------------------------- likelihoods

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target_in, bool log_input, bool full, double eps,
                        Reduction reduction) {
  const char* op = "poisson_nll_loss";
  check_floating(input, op, "input");
  check_defined(target_in, op, "target");
  check_broadcast(input, target_in, op);
  const Tensor target = as_float(target_in, input);
  Tensor loss = log_input ? sub(exp(input), mul(target, input)) : sub(input, mul(target, log(add(input, eps))));
  if (full) {
    // Stirling's approximation of log(t!), only where t > 1 (log of 1 keeps the rest finite).
    const Tensor small = le(target, ones_like(target));
    const Tensor ts = where(small, ones_like(target), target);
    const Tensor stirling = add(sub(mul(ts, log(ts)), ts), mul(log(mul(ts, 2.0 * std::numbers::pi)), 0.5));
    loss = add(loss, where(small, zeros_of(stirling), stirling));
  }
  return reduce(loss, reduction);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var_in, bool full, double eps,
                         Reduction reduction) {
  const char* op = "gaussian_nll_loss";
  check_floating(input, op, "input");
  check_defined(target, op, "target");
  check_floating(var_in, op, "var");
  if (!(eps >= 0)) throw ValueError(std::string(op) + ": eps must be >= 0, got " + num(eps));
  check_broadcast(input, target, op);
  detail::check_same_device(input, var_in, op);
  Tensor var = var_in;
  const Shape& is = input.shape();
  const Shape& vs = var.shape();
  if (vs != is) {
    const bool short_by_one = is.size() == vs.size() + 1 && std::equal(vs.begin(), vs.end(), is.begin());
    int64_t mismatched = 0;  // torch's test: the sizes of the mismatched dims sum to 1
    bool same_rank = is.size() == vs.size();
    if (same_rank) {
      for (size_t i = 0; i < is.size(); ++i) {
        if (is[i] != vs[i]) mismatched += vs[i];
      }
    }
    if (short_by_one) {
      var = unsqueeze(var, -1);
    } else if (!(same_rank && mismatched == 1)) {
      throw ShapeError(std::string(op) + ": var of shape " + shape_str(vs) +
                       " is of incorrect size for the input of shape " + shape_str(is) +
                       " (expected the input's shape, the input's shape without its last dim, or one dim of size 1)");
    }
  }
  {
    NoGradGuard ng;
    if (var.numel() > 0 && any(lt(var.detach(), zeros_of(var))).item() != 0.0) {
      throw ValueError(std::string(op) + ": var has negative entries (min " + num(min(var.detach()).item()) + ")");
    }
  }
  // max(var, eps) whose gradient is the identity, like torch's clamp_ under no_grad.
  const Tensor vd = var.detach();
  const Tensor v = add(var, sub(clamp(vd, eps, std::nullopt), vd));
  const Tensor d = sub(input, target);
  Tensor loss = mul(add(log(v), div(mul(d, d), v)), 0.5);
  if (full) loss = add(loss, 0.5 * std::log(2.0 * std::numbers::pi));
  return reduce(loss, reduction);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, double var, bool full, double eps,
                         Reduction reduction) {
  check_floating(input, "gaussian_nll_loss", "input");
  if (!(var >= 0)) throw ValueError("gaussian_nll_loss: var has negative entries (got " + num(var) + ")");
  return gaussian_nll_loss(input, target, full_like(input, var), full, eps, reduction);
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

// ---------------------------------------------------------------- modules

Tensor BCELoss::forward(const Tensor& input, const Tensor& target) {
  return binary_cross_entropy(input, target, weight_, reduction_);
}

KLDivLoss::KLDivLoss(const std::string& reduction, bool log_target)
    : Loss(reduction == "batchmean" ? Reduction::Mean : parse_reduction(reduction, "KLDivLoss")),
      reduction_str_(reduction),
      log_target_(log_target) {}
Tensor KLDivLoss::forward(const Tensor& input, const Tensor& target) {
  return kl_div(input, target, reduction_str_, log_target_);
}

SmoothL1Loss::SmoothL1Loss(Reduction r, double beta) : Loss(r), beta_(beta) {
  if (!(beta >= 0) || !std::isfinite(beta))
    throw ValueError("SmoothL1Loss: beta must be >= 0 and finite, got " + num(beta));
}
Tensor SmoothL1Loss::forward(const Tensor& input, const Tensor& target) {
  return smooth_l1_loss(input, target, reduction_, beta_);
}

Tensor SoftMarginLoss::forward(const Tensor& input, const Tensor& target) {
  return soft_margin_loss(input, target, reduction_);
}

Tensor MarginRankingLoss::forward(const Tensor&, const Tensor&) {
  throw DtypeError("MarginRankingLoss takes (input1, input2, target)");
}
Tensor MarginRankingLoss::forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
  return margin_ranking_loss(input1, input2, target, margin_, reduction_);
}

Tensor HingeEmbeddingLoss::forward(const Tensor& input, const Tensor& target) {
  return hinge_embedding_loss(input, target, margin_, reduction_);
}

Tensor CosineEmbeddingLoss::forward(const Tensor&, const Tensor&) {
  throw DtypeError("CosineEmbeddingLoss takes (input1, input2, target)");
}
Tensor CosineEmbeddingLoss::forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
  return cosine_embedding_loss(input1, input2, target, margin_, reduction_);
}

Tensor PoissonNLLLoss::forward(const Tensor& input, const Tensor& target) {
  return poisson_nll_loss(input, target, log_input_, full_, eps_, reduction_);
}

Tensor GaussianNLLLoss::forward(const Tensor&, const Tensor&) {
  throw DtypeError("GaussianNLLLoss takes (input, target, var)");
}
Tensor GaussianNLLLoss::forward(const Tensor& input, const Tensor& target, const Tensor& var) {
  return gaussian_nll_loss(input, target, var, full_, eps_, reduction_);
}

Tensor MultiLabelSoftMarginLoss::forward(const Tensor& input, const Tensor& target) {
  return multilabel_soft_margin_loss(input, target, weight_, reduction_);
}

MultiMarginLoss::MultiMarginLoss(int64_t p, double margin, Tensor weight, Reduction r)
    : Loss(r), p_(p), margin_(margin), weight_(std::move(weight)) {
  if (p != 1 && p != 2)
    throw ValueError("MultiMarginLoss: only p == 1 and p == 2 are supported, got " + std::to_string(p));
}
Tensor MultiMarginLoss::forward(const Tensor& input, const Tensor& target) {
  return multi_margin_loss(input, target, p_, margin_, weight_, reduction_);
}

}  // namespace st::nn
