#pragma once
#include <optional>

#include "spiraltorch/nn/module.h"

namespace st::nn {

// Batch normalisation over channels (dim 1), PyTorch semantics:
// - parameters weight (ones) and bias (zeros) of shape (C,) when affine;
// - buffers running_mean (zeros), running_var (ones) and num_batches_tracked (int64,
//   0-d) when track_running_stats;
// - training: normalise with batch statistics, update the running stats with
//   `momentum` (the unbiased batch variance goes into running_var), or with the
//   cumulative average when momentum is nullopt; eval: use the running stats
//   (batch stats if none are tracked).
class BatchNorm : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  int64_t num_features() const { return num_features_; }
  double eps() const { return eps_; }
  std::optional<double> momentum() const { return momentum_; }
  bool affine() const { return affine_; }
  bool track_running_stats() const { return track_; }
  Tensor weight() { return get_param("weight"); }
  Tensor bias() { return get_param("bias"); }
  Tensor running_mean() { return get_buffer("running_mean"); }
  Tensor running_var() { return get_buffer("running_var"); }
  Tensor num_batches_tracked() { return get_buffer("num_batches_tracked"); }
  // Zeroes running_mean and num_batches_tracked, fills running_var with ones.
  void reset_running_stats();
  // reset_running_stats(), weight = 1, bias = 0.
  void reset_parameters();

 protected:
  BatchNorm(int64_t num_features, double eps, std::optional<double> momentum, bool affine, bool track_running_stats,
            std::string name);
  // Throws ShapeError unless the input has an accepted rank.
  virtual void check_input(const Tensor& input) const = 0;
  void check_channels(const Tensor& input) const;

 private:
  Tensor get_param(const char* n) {
    Tensor* t = find_parameter(n);
    return t ? *t : Tensor();
  }
  Tensor get_buffer(const char* n) {
    Tensor* t = find_buffer(n);
    return t ? *t : Tensor();
  }
  int64_t num_features_;
  double eps_;
  std::optional<double> momentum_;
  bool affine_, track_;
};

// Inputs (N, C) or (N, C, L).
class BatchNorm1d : public BatchNorm {
 public:
  BatchNorm1d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1, bool affine = true,
              bool track_running_stats = true, std::string name = "")
      : BatchNorm(num_features, eps, momentum, affine, track_running_stats, std::move(name)) {}
  std::string type_name() const override { return "BatchNorm1d"; }

 protected:
  void check_input(const Tensor& input) const override;
};

// Inputs (N, C, H, W).
class BatchNorm2d : public BatchNorm {
 public:
  BatchNorm2d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1, bool affine = true,
              bool track_running_stats = true, std::string name = "")
      : BatchNorm(num_features, eps, momentum, affine, track_running_stats, std::move(name)) {}
  std::string type_name() const override { return "BatchNorm2d"; }

 protected:
  void check_input(const Tensor& input) const override;
};

}  // namespace st::nn
