// Reduction names and the loss modules (each forwards to its functional form).
#include <cmath>

#include "nn/loss_common.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/nn/loss_torch_family.h"

namespace st::nn {

using loss_detail::num;

Reduction parse_reduction(const std::string& name, const char* op) {
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  if (name == "none") return Reduction::None;
  throw ValueError(std::string(op) + ": reduction must be 'mean', 'sum' or 'none', got '" + name + "'");
}

std::string reduction_name(Reduction r) {
  switch (r) {
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
    case Reduction::None:
      break;
  }
  return "none";
}

// ---------------------------------------------------------------- modules

Tensor Loss::forward(const Tensor&) {
  throw DtypeError(type_name() + ".forward takes (prediction, target), not a single tensor");
}

Tensor MeanSquaredError::forward(const Tensor& pred, const Tensor& target) {
  return mse_loss(pred, target, reduction_);
}
Tensor L1Loss::forward(const Tensor& pred, const Tensor& target) { return l1_loss(pred, target, reduction_); }

HuberLoss::HuberLoss(double delta, Reduction r) : Loss(r), delta_(delta) {
  if (!(delta > 0) || !std::isfinite(delta)) throw ValueError("HuberLoss: delta must be positive and finite");
}
Tensor HuberLoss::forward(const Tensor& pred, const Tensor& target) {
  return huber_loss(pred, target, reduction_, delta_);
}

Tensor BCEWithLogits::forward(const Tensor& pred, const Tensor& target) {
  return binary_cross_entropy_with_logits(pred, target, weight_, pos_weight_, reduction_);
}

HyperbolicCrossEntropy::HyperbolicCrossEntropy(double curvature, Reduction r, double epsilon)
    : Loss(r), curvature_(curvature), epsilon_(epsilon) {
  if (!std::isfinite(curvature) || !(curvature < 0)) {
    throw ValueError("HyperbolicCrossEntropy: curvature must be negative and finite, got " + std::to_string(curvature));
  }
  if (!(epsilon >= 0 && epsilon < 0.5)) {
    throw ValueError("HyperbolicCrossEntropy: epsilon must be in [0, 0.5), got " + std::to_string(epsilon));
  }
}
Tensor HyperbolicCrossEntropy::forward(const Tensor& pred, const Tensor& target) {
  return hyperbolic_cross_entropy(pred, target, curvature_, reduction_, epsilon_);
}

CategoricalCrossEntropy::CategoricalCrossEntropy(Tensor weight, int64_t ignore_index, Reduction r,
                                                 double label_smoothing)
    : Loss(r), weight_(std::move(weight)), ignore_index_(ignore_index), label_smoothing_(label_smoothing) {
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw ValueError("CategoricalCrossEntropy: label_smoothing must be in [0, 1]");
  }
}
Tensor CategoricalCrossEntropy::forward(const Tensor& pred, const Tensor& target) {
  return cross_entropy(pred, target, weight_, ignore_index_, reduction_, label_smoothing_);
}

Tensor NLLLoss::forward(const Tensor& pred, const Tensor& target) {
  return nll_loss(pred, target, weight_, ignore_index_, reduction_);
}

FocalLoss::FocalLoss(double alpha, double gamma, Reduction r) : Loss(r), alpha_(alpha), gamma_(gamma) {
  if (!(gamma >= 0) || !std::isfinite(gamma)) throw ValueError("FocalLoss: gamma must be >= 0 and finite");
  if (!(alpha <= 1.0) || !std::isfinite(alpha))
    throw ValueError("FocalLoss: alpha must be <= 1 (negative disables it)");
}
Tensor FocalLoss::forward(const Tensor& pred, const Tensor& target) {
  return sigmoid_focal_loss(pred, target, alpha_, gamma_, reduction_);
}

ContrastiveLoss::ContrastiveLoss(double margin, Reduction r) : Loss(r), margin_(margin) {
  if (!(margin >= 0) || !std::isfinite(margin)) throw ValueError("ContrastiveLoss: margin must be >= 0 and finite");
}
Tensor ContrastiveLoss::forward(const Tensor& distance, const Tensor& label) {
  return contrastive_loss_from_distance(distance, label, margin_, reduction_);
}
Tensor ContrastiveLoss::forward(const Tensor& x1, const Tensor& x2, const Tensor& label) {
  return contrastive_loss(x1, x2, label, margin_, reduction_);
}

TripletLoss::TripletLoss(double margin, double p, double eps, bool swap, Reduction r)
    : Loss(r), margin_(margin), p_(p), eps_(eps), swap_(swap) {
  if (!(margin >= 0) || !std::isfinite(margin)) throw ValueError("TripletLoss: margin must be >= 0 and finite");
  if (!(p > 0)) throw ValueError("TripletLoss: p must be positive");
}
Tensor TripletLoss::forward(const Tensor&, const Tensor&) {
  throw DtypeError("TripletLoss takes (anchor, positive, negative)");
}
Tensor TripletLoss::forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
  return triplet_margin_loss(anchor, positive, negative, margin_, p_, eps_, swap_, reduction_);
}

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
