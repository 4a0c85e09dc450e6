#pragma once
// Group and RMS normalisation, vector normalisation and the cosine/pairwise distances as layers
// (PyTorch's GroupNorm, RMSNorm, CosineSimilarity, PairwiseDistance and their functional forms).
// All are composed from the differentiable ops (layer_norm, mean, rsqrt, norm, ...), so they
// have gradients and run on every device.
#include <optional>

#include "spiraltorch/nn/module.h"
#include "spiraltorch/ops.h"

namespace st::nn {

// Normalises input (N, C, *) over each group of C / num_groups channels together with the
// trailing dims (biased variance, like PyTorch), then applies weight/bias of shape (C,) when given.
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);

// Instance normalisation of (N, C, *spatial): each (sample, channel) over its spatial dims (group_norm
// with C groups), then weight/bias (C,) when given. use_input_stats=false normalises with
// running_mean/running_var instead (batch_norm's evaluation). With use_input_stats and running stats
// given, they move in place toward the batch average of the instances' means and unbiased variances:
// r = (1 - momentum) r + momentum * stat (PyTorch's rule).
Tensor instance_norm(const Tensor& input, const Tensor& running_mean = {}, const Tensor& running_var = {},
                     const Tensor& weight = {}, const Tensor& bias = {}, bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);

// x / sqrt(mean(x^2 over the trailing normalized_shape dims) + eps) * weight. eps unset means the
// machine epsilon of the input's dtype (PyTorch's default); weight, when given, has normalized_shape.
Tensor rms_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = {});

// x / max(||x||_p along dim, eps), like torch.nn.functional.normalize.
Tensor normalize(const Tensor& input, double p = 2.0, int64_t dim = 1, double eps = 1e-12);

// sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along dim after broadcasting x1 and x2.
// As in PyTorch, the clamp by eps changes the value only: the gradient flows through the norms.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);

class GroupNorm : public Module {
 public:
  // num_channels must be divisible by num_groups (ValueError naming both). affine registers
  // weight (ones) and, with bias, bias (zeros), both of shape (num_channels,).
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true, bool bias = true,
            std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "GroupNorm"; }
  int64_t num_groups() const { return num_groups_; }
  int64_t num_channels() const { return num_channels_; }
  double eps() const { return eps_; }
  bool affine() const { return affine_; }
  Tensor weight();
  Tensor bias();

 private:
  int64_t num_groups_, num_channels_;
  double eps_;
  bool affine_;
};

class RMSNorm : public Module {
 public:
  // elementwise_affine registers weight (ones) of shape normalized_shape.
  explicit RMSNorm(Shape normalized_shape, std::optional<double> eps = {}, bool elementwise_affine = true,
                   std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "RMSNorm"; }
  const Shape& normalized_shape() const { return shape_; }
  std::optional<double> eps() const { return eps_; }
  bool elementwise_affine() const { return affine_; }
  Tensor weight();

 private:
  Shape shape_;
  std::optional<double> eps_;
  bool affine_;
};

// Two-input layers: call forward(x1, x2); the one-tensor forward raises a DtypeError saying so.
class CosineSimilarity : public Module {
 public:
  explicit CosineSimilarity(int64_t dim = 1, double eps = 1e-8, std::string name = "")
      : Module(std::move(name)), dim_(dim), eps_(eps) {}
  Tensor forward(const Tensor& input) override;
  Tensor forward(const Tensor& x1, const Tensor& x2);
  std::string type_name() const override { return "CosineSimilarity"; }
  int64_t dim() const { return dim_; }
  double eps() const { return eps_; }

 private:
  int64_t dim_;
  double eps_;
};

// ||x1 - x2 + eps||_p over the last dim (see pairwise_distance in loss.h); keepdim keeps it as size 1.
class PairwiseDistance : public Module {
 public:
  explicit PairwiseDistance(double p = 2.0, double eps = 1e-6, bool keepdim = false, std::string name = "")
      : Module(std::move(name)), p_(p), eps_(eps), keepdim_(keepdim) {}
  Tensor forward(const Tensor& input) override;
  Tensor forward(const Tensor& x1, const Tensor& x2);
  std::string type_name() const override { return "PairwiseDistance"; }
  double p() const { return p_; }
  double eps() const { return eps_; }
  bool keepdim() const { return keepdim_; }

 private:
  double p_, eps_;
  bool keepdim_;
};

}  // namespace st::nn
