#pragma once
// The rest of torch.nn's losses (BCELoss, KLDivLoss, SmoothL1Loss, SoftMarginLoss,
// MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss, PoissonNLLLoss,
// GaussianNLLLoss, MultiLabelSoftMarginLoss, MultiMarginLoss): the same arguments,
// defaults and reductions as torch.nn.functional, composed from differentiable ops so
// they run on every device with autograd.
#include <string>

#include "spiraltorch/nn/loss.h"

namespace st::nn {

// ---- functional ----
// -w (t log x + (1 - t) log(1 - x)) on probabilities x in [0, 1], each log clamped at -100
// like torch; `weight` broadcasts against the input. The input gradient is
// w (x - t) / max(x (1 - x), 1e-12), as in torch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = Reduction::Mean);
// target (log target - input) on log-probabilities `input` (0 where target == 0), or
// exp(target) (target - input) with log_target. reduction: "mean" | "batchmean" (sum over
// the batch size, dim 0) | "sum" | "none".
Tensor kl_div(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
              bool log_target = false);
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta; beta = 0 is the L1 loss.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
// log(1 + exp(-y x)) for labels y in {-1, 1}.
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// max(0, -y (x1 - x2) + margin).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                           Reduction reduction = Reduction::Mean);
// x where y == 1, max(0, margin - x) where y == -1 (torch's rule for other labels: both terms).
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            Reduction reduction = Reduction::Mean);
// 1 - cos(x1, x2) where y == 1, max(0, cos(x1, x2) - margin) where y == -1; inputs (N, D)
// with target (N,), or (D,) with a 0-d target.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                             Reduction reduction = Reduction::Mean);
// exp(x) - t x (log_input) or x - t log(x + eps); `full` adds Stirling's term
// t log t - t + 0.5 log(2 pi t) where t > 1.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true, bool full = false,
                        double eps = 1e-8, Reduction reduction = Reduction::Mean);
// 0.5 (log v + (x - t)^2 / v) (+ 0.5 log 2 pi with full), v = max(var, eps) where the clamp
// does not stop the gradient (like torch). var has the input's shape, or lacks its last
// dim, or differs from it in exactly one size-1 dim.
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full = false,
                         double eps = 1e-6, Reduction reduction = Reduction::Mean);
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, double var, bool full = false, double eps = 1e-6,
                         Reduction reduction = Reduction::Mean);
// -mean_c w_c (t log sigmoid(x) + (1 - t) log sigmoid(-x)) over the last (class) dim.
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                                   Reduction reduction = Reduction::Mean);
// sum_{i != y} w_y max(0, margin - x_y + x_i)^p / C for (N, C) or (C,) input and int64
// class indices; p is 1 or 2.
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p = 1, double margin = 1.0,
                         const Tensor& weight = {}, Reduction reduction = Reduction::Mean);

// ---- modules ----
class BCELoss : public Loss {
 public:
  explicit BCELoss(Tensor weight = {}, Reduction r = Reduction::Mean) : Loss(r), weight_(std::move(weight)) {}
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  const Tensor& weight() const { return weight_; }
  std::string type_name() const override { return "BCELoss"; }

 private:
  Tensor weight_;
};

class KLDivLoss : public Loss {
 public:
  // reduction: "mean" | "batchmean" | "sum" | "none".
  explicit KLDivLoss(const std::string& reduction = "mean", bool log_target = false);
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  const std::string& reduction_string() const { return reduction_str_; }
  bool log_target() const { return log_target_; }
  std::string type_name() const override { return "KLDivLoss"; }

 private:
  std::string reduction_str_;
  bool log_target_;
};

class SmoothL1Loss : public Loss {
 public:
  explicit SmoothL1Loss(Reduction r = Reduction::Mean, double beta = 1.0);
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  double beta() const { return beta_; }
  std::string type_name() const override { return "SmoothL1Loss"; }

 private:
  double beta_;
};

class SoftMarginLoss : public Loss {
 public:
  explicit SoftMarginLoss(Reduction r = Reduction::Mean) : Loss(r) {}
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  std::string type_name() const override { return "SoftMarginLoss"; }
};

// forward(input1, input2, target); the two-tensor form is refused.
class MarginRankingLoss : public Loss {
 public:
  explicit MarginRankingLoss(double margin = 0.0, Reduction r = Reduction::Mean) : Loss(r), margin_(margin) {}
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  double margin() const { return margin_; }
  std::string type_name() const override { return "MarginRankingLoss"; }

 private:
  double margin_;
};

class HingeEmbeddingLoss : public Loss {
 public:
  explicit HingeEmbeddingLoss(double margin = 1.0, Reduction r = Reduction::Mean) : Loss(r), margin_(margin) {}
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  double margin() const { return margin_; }
  std::string type_name() const override { return "HingeEmbeddingLoss"; }

 private:
  double margin_;
};

// forward(input1, input2, target); the two-tensor form is refused.
class CosineEmbeddingLoss : public Loss {
 public:
  explicit CosineEmbeddingLoss(double margin = 0.0, Reduction r = Reduction::Mean) : Loss(r), margin_(margin) {}
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  double margin() const { return margin_; }
  std::string type_name() const override { return "CosineEmbeddingLoss"; }

 private:
  double margin_;
};

class PoissonNLLLoss : public Loss {
 public:
  explicit PoissonNLLLoss(bool log_input = true, bool full = false, double eps = 1e-8, Reduction r = Reduction::Mean)
      : Loss(r), log_input_(log_input), full_(full), eps_(eps) {}
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  bool log_input() const { return log_input_; }
  bool full() const { return full_; }
  double eps() const { return eps_; }
  std::string type_name() const override { return "PoissonNLLLoss"; }

 private:
  bool log_input_, full_;
  double eps_;
};

// forward(input, target, var); the two-tensor form is refused.
class GaussianNLLLoss : public Loss {
 public:
  explicit GaussianNLLLoss(bool full = false, double eps = 1e-6, Reduction r = Reduction::Mean)
      : Loss(r), full_(full), eps_(eps) {}
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var);
  bool full() const { return full_; }
  double eps() const { return eps_; }
  std::string type_name() const override { return "GaussianNLLLoss"; }

 private:
  bool full_;
  double eps_;
};

class MultiLabelSoftMarginLoss : public Loss {
 public:
  explicit MultiLabelSoftMarginLoss(Tensor weight = {}, Reduction r = Reduction::Mean)
      : Loss(r), weight_(std::move(weight)) {}
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  const Tensor& weight() const { return weight_; }
  std::string type_name() const override { return "MultiLabelSoftMarginLoss"; }

 private:
  Tensor weight_;
};

class MultiMarginLoss : public Loss {
 public:
  explicit MultiMarginLoss(int64_t p = 1, double margin = 1.0, Tensor weight = {}, Reduction r = Reduction::Mean);
  using Loss::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  int64_t p() const { return p_; }
  double margin() const { return margin_; }
  const Tensor& weight() const { return weight_; }
  std::string type_name() const override { return "MultiMarginLoss"; }

 private:
  int64_t p_;
  double margin_;
  Tensor weight_;
};

}  // namespace st::nn
