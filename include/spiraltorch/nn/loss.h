#pragma once
// Loss functions: a functional form and a Module per loss. Every loss returns a
// tensor that backpropagates; reduction is "mean" (default), "sum" or "none".
// Non-finite losses are returned as they are (trainers and optimizers check).
#include <optional>
#include <string>

#include "spiraltorch/nn/module.h"

namespace st::nn {

enum class Reduction { Mean, Sum, None };
// Parses "mean" | "sum" | "none" (ValueError otherwise), naming `op` in errors.
Reduction parse_reduction(const std::string& name, const char* op);
std::string reduction_name(Reduction r);

// ---- functional ----
Tensor mse_loss(const Tensor& pred, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& pred, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor huber_loss(const Tensor& pred, const Tensor& target, Reduction reduction = Reduction::Mean, double delta = 1.0);
// Numerically stable sigmoid + binary cross-entropy on logits, like
// torch.nn.functional.binary_cross_entropy_with_logits. `weight` broadcasts against the
// loss, `pos_weight` against the class dimension (the last one).
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, const Tensor& weight = {},
                                        const Tensor& pos_weight = {}, Reduction reduction = Reduction::Mean);
// Element-wise binary cross-entropy on logits scaled by s = sqrt(|curvature|) (a
// temperature): targets are per-element probabilities in [0, 1], not class indices.
// `epsilon` > 0 clamps targets to [epsilon, 1 - epsilon] first (0: no clamp).
Tensor hyperbolic_cross_entropy(const Tensor& logits, const Tensor& target, double curvature = -1.0,
                                Reduction reduction = Reduction::Mean, double epsilon = 0.0);
// Fused log-softmax + gather cross-entropy over dim 1 of (N, C) or (N, C, d...) logits
// (or dim 0 of unbatched (C,) logits). `target` holds int64 class indices (N, d...) or
// class probabilities shaped like the logits. Matches torch.nn.functional.cross_entropy.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight = {}, int64_t ignore_index = -100,
                     Reduction reduction = Reduction::Mean, double label_smoothing = 0.0);
// cross_entropy(linear(input, weight, bias), target) over input's rows (..., features) with
// integer targets (...), without materialising the (rows, classes) logits: the rows go through
// in chunks (chunk_rows; 0: automatic, on the CPU max(256 rows, 2^20 logits), elsewhere at most
// 2^28 logits), each chunk's gradient is multiplied into the input's and weight's gradients at
// once, and only those are kept for the backward. reduction "mean" (over targets other than ignore_index) or "sum";
// under autocast the products run in the region's dtype and float32 weights get float32 gradients. Higher-order
// gradients (create_graph) are not supported: ValueError in the backward.
Tensor linear_cross_entropy(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& target,
                            int64_t ignore_index = -100, Reduction reduction = Reduction::Mean, int64_t chunk_rows = 0);
// Negative log-likelihood of log-probabilities (N, C) / (N, C, d...) at int64 indices.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight = {}, int64_t ignore_index = -100,
                Reduction reduction = Reduction::Mean);
// Binary focal loss on logits, like torchvision.ops.sigmoid_focal_loss: alpha < 0
// disables the class balancing factor.
Tensor sigmoid_focal_loss(const Tensor& logits, const Tensor& target, double alpha = 0.25, double gamma = 2.0,
                          Reduction reduction = Reduction::Mean);
// Euclidean distance along the last dim; the gradient at distance 0 is taken as 0.
Tensor euclidean_distance(const Tensor& x1, const Tensor& x2);
// y * d^2 + (1 - y) * max(0, margin - d)^2 for precomputed distances d (label 1 = similar).
Tensor contrastive_loss_from_distance(const Tensor& distance, const Tensor& label, double margin = 1.0,
                                      Reduction reduction = Reduction::Mean);
// Same with d = ||x1 - x2|| over the last dim.
Tensor contrastive_loss(const Tensor& x1, const Tensor& x2, const Tensor& label, double margin = 1.0,
                        Reduction reduction = Reduction::Mean);
// ||x1 - x2 + eps||_p over the last dim, like torch.nn.functional.pairwise_distance.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6);
// max(0, d(a, p) - d(a, n) + margin), like torch.nn.TripletMarginLoss.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin = 1.0,
                           double p = 2.0, double eps = 1e-6, bool swap = false, Reduction reduction = Reduction::Mean);

// ---- modules ----
// Base of the losses: call with (prediction, target). The one-tensor Module::forward
// is refused with a TypeError-like DtypeError explaining the signature.
class Loss : public Module {
 public:
  explicit Loss(Reduction reduction) : reduction_(reduction) {}
  Tensor forward(const Tensor& input) override;
  virtual Tensor forward(const Tensor& pred, const Tensor& target) = 0;
  Tensor operator()(const Tensor& pred, const Tensor& target) { return forward(pred, target); }
  Reduction reduction() const { return reduction_; }
  std::string type_name() const override { return "Loss"; }

 protected:
  Reduction reduction_;
};

class MeanSquaredError : public Loss {
 public:
  explicit MeanSquaredError(Reduction r = Reduction::Mean) : Loss(r) {}
  using Loss::forward;
  Tensor forward(const Tensor& pred, const Tensor& target) override;
  std::string type_name() const override { return "MeanSquaredError"; }
};

class L1Loss : public Loss {
 public:
  explicit L1Loss(Reduction r = Reduction::Mean) : Loss(r) {}
  using Loss::forward;
  Tensor forward(const Tensor& pred, const Tensor& target) override;
  std::string type_name() const override { return "L1Loss"; }
};

class HuberLoss : public Loss {
 public:
  explicit HuberLoss(double delta = 1.0, Reduction r = Reduction::Mean);
  using Loss::forward;
  Tensor forward(const Tensor& pred, const Tensor& target) override;
  double delta() const { return delta_; }
  std::string type_name() const override { return "HuberLoss"; }

 private:
  double delta_;
};

class BCEWithLogits : public Loss {
 public:
  explicit BCEWithLogits(Tensor weight = {}, Tensor pos_weight = {}, Reduction r = Reduction::Mean)
      : Loss(r), weight_(std::move(weight)), pos_weight_(std::move(pos_weight)) {}
  using Loss::forward;
  Tensor forward(const Tensor& pred, const Tensor& target) override;
  const Tensor& weight() const { return weight_; }
  const Tensor& pos_weight() const { return pos_weight_; }
  std::string type_name() const override { return "BCEWithLogits"; }

 private:
  Tensor weight_, pos_weight_;
};

class HyperbolicCrossEntropy : public Loss {
 public:
  explicit HyperbolicCrossEntropy(double curvature = -1.0, Reduction r = Reduction::Mean, double epsilon = 0.0);
  using Loss::forward;
  Tensor forward(const Tensor& pred, const Tensor& target) override;
  double curvature() const { return curvature_; }
  double epsilon() const { return epsilon_; }
  std::string type_name() const override { return "HyperbolicCrossEntropy"; }

 private:
  double curvature_, epsilon_;
};

class CategoricalCrossEntropy : public Loss {
 public:
  explicit CategoricalCrossEntropy(Tensor weight = {}, int64_t ignore_index = -100, Reduction r = Reduction::Mean,
                                   double label_smoothing = 0.0);
  using Loss::forward;
  Tensor forward(const Tensor& pred, const Tensor& target) override;
  const Tensor& weight() const { return weight_; }
  int64_t ignore_index() const { return ignore_index_; }
  double label_smoothing() const { return label_smoothing_; }
  std::string type_name() const override { return "CategoricalCrossEntropy"; }

 private:
  Tensor weight_;
  int64_t ignore_index_;
  double label_smoothing_;
};

class NLLLoss : public Loss {
 public:
  explicit NLLLoss(Tensor weight = {}, int64_t ignore_index = -100, Reduction r = Reduction::Mean)
      : Loss(r), weight_(std::move(weight)), ignore_index_(ignore_index) {}
  using Loss::forward;
  Tensor forward(const Tensor& pred, const Tensor& target) override;
  const Tensor& weight() const { return weight_; }
  int64_t ignore_index() const { return ignore_index_; }
  std::string type_name() const override { return "NLLLoss"; }

 private:
  Tensor weight_;
  int64_t ignore_index_;
};

class FocalLoss : public Loss {
 public:
  explicit FocalLoss(double alpha = 0.25, double gamma = 2.0, Reduction r = Reduction::Mean);
  using Loss::forward;
  Tensor forward(const Tensor& pred, const Tensor& target) override;
  double alpha() const { return alpha_; }
  double gamma() const { return gamma_; }
  std::string type_name() const override { return "FocalLoss"; }

 private:
  double alpha_, gamma_;
};

// forward(distance, label) or forward(x1, x2, label).
class ContrastiveLoss : public Loss {
 public:
  explicit ContrastiveLoss(double margin = 1.0, Reduction r = Reduction::Mean);
  using Loss::forward;
  Tensor forward(const Tensor& distance, const Tensor& label) override;
  Tensor forward(const Tensor& x1, const Tensor& x2, const Tensor& label);
  double margin() const { return margin_; }
  std::string type_name() const override { return "ContrastiveLoss"; }

 private:
  double margin_;
};

// forward(anchor, positive, negative); the two-argument form is refused.
class TripletLoss : public Loss {
 public:
  explicit TripletLoss(double margin = 1.0, double p = 2.0, double eps = 1e-6, bool swap = false,
                       Reduction r = Reduction::Mean);
  using Loss::forward;
  Tensor forward(const Tensor& pred, const Tensor& target) override;
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  double margin() const { return margin_; }
  double p() const { return p_; }
  double eps() const { return eps_; }
  bool swap() const { return swap_; }
  std::string type_name() const override { return "TripletLoss"; }

 private:
  double margin_, p_, eps_;
  bool swap_;
};

}  // namespace st::nn
