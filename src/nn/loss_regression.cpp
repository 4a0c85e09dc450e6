// Regression losses: squared, absolute, Huber and smooth L1 errors, through loss_fused.h (a
// backend's fused kernel where it has one, else the composite that defines them).
#include <cmath>

#include "nn/loss_common.h"
#include "nn/loss_fused.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/nn/loss_torch_family.h"

namespace st::nn {

using namespace loss_detail;

Tensor mse_loss(const Tensor& pred_in, const Tensor& target_in, Reduction reduction) {
  const Tensor pred = autocast::to_float(pred_in), target = autocast::to_float(target_in);  // float32 list
  check_pointwise("mse_loss", pred, target);
  return reduce(fused_or_composite(backend::PointwiseLoss::Mse, "MseLossBackward", pred, target, Tensor(), 0.0, 0.0,
                                   [&] { return square(sub(pred, target)); }),
                reduction);
}

Tensor l1_loss(const Tensor& pred_in, const Tensor& target_in, Reduction reduction) {
  const Tensor pred = autocast::to_float(pred_in), target = autocast::to_float(target_in);  // float32 list
  check_pointwise("l1_loss", pred, target);
  return reduce(fused_or_composite(backend::PointwiseLoss::L1, "L1LossBackward", pred, target, Tensor(), 0.0, 0.0,
                                   [&] { return abs(sub(pred, target)); }),
                reduction);
}

Tensor huber_loss(const Tensor& pred_in, const Tensor& target_in, Reduction reduction, double delta) {
  const Tensor pred = autocast::to_float(pred_in), target = autocast::to_float(target_in);  // float32 list
  if (!(delta > 0)) throw ValueError("huber_loss: delta must be positive, got " + std::to_string(delta));
  check_pointwise("huber_loss", pred, target);
  return reduce(
      fused_or_composite(backend::PointwiseLoss::Huber, "HuberLossBackward", pred, target, Tensor(), delta, 0.0,
                         [&] {
    const Tensor d = sub(pred, target);
    const Tensor ad = abs(d);
    return where(lt(ad, wrap_scalar(delta, ad)), mul(square(d), 0.5), mul(sub(ad, 0.5 * delta), delta));
  }),
      reduction);
}

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

}  // namespace st::nn
