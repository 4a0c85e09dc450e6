// Likelihood and divergence losses (KL divergence, Poisson and Gaussian negative
// log-likelihoods), composed from differentiable ops: every device and autograd come with them.
#include <cmath>
#include <numbers>

#include "nn/loss_common.h"
#include "spiraltorch/nn/loss_torch_family.h"

namespace st::nn {

using namespace loss_detail;

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

}  // namespace st::nn
