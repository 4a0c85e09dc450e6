#include "spiraltorch/nn/batch_norm.h"

#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/ops.h"

namespace st::nn {

BatchNorm::BatchNorm(int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                     bool track_running_stats, std::string name)
    : Module(std::move(name)),
      num_features_(num_features),
      eps_(eps),
      momentum_(momentum),
      affine_(affine),
      track_(track_running_stats) {
  if (num_features <= 0)
    throw ValueError("BatchNorm: num_features must be positive, got " + std::to_string(num_features));
  if (!(eps >= 0)) throw ValueError("BatchNorm: eps must be non-negative, got " + std::to_string(eps));
  if (momentum && !(*momentum >= 0.0 && *momentum <= 1.0)) {
    throw ValueError("BatchNorm: momentum must lie in [0, 1], got " + std::to_string(*momentum));
  }
  if (affine) {
    register_parameter("weight", ones({num_features}));
    register_parameter("bias", zeros({num_features}));
  }
  if (track_running_stats) {
    register_buffer("running_mean", zeros({num_features}));
    register_buffer("running_var", ones({num_features}));
    register_buffer("num_batches_tracked", zeros(Shape{}, Dtype::Int64));
  }
}

void BatchNorm::reset_running_stats() {
  if (!track_) return;
  NoGradGuard ng;
  Tensor rm = running_mean(), rv = running_var(), nb = num_batches_tracked();
  zero_(rm);
  fill_(rv, 1.0);
  zero_(nb);
}

void BatchNorm::reset_parameters() {
  reset_running_stats();
  if (!affine_) return;
  NoGradGuard ng;
  Tensor w = weight(), b = bias();
  fill_(w, 1.0);
  zero_(b);
}

void BatchNorm::check_channels(const Tensor& input) const {
  if (input.shape()[1] != num_features_) {
    throw ShapeError(type_name() + "(" + std::to_string(num_features_) + "): input of shape " +
                     shape_str(input.shape()) + " has " + std::to_string(input.shape()[1]) +
                     " channels at dim 1, expected " + std::to_string(num_features_));
  }
}

void BatchNorm1d::check_input(const Tensor& input) const {
  if (input.dim() != 2 && input.dim() != 3) {
    throw ShapeError("BatchNorm1d(" + std::to_string(num_features()) +
                     "): expected a 2-D (N, C) or 3-D (N, C, L) input, got shape " + shape_str(input.shape()));
  }
  check_channels(input);
}

void BatchNorm2d::check_input(const Tensor& input) const {
  if (input.dim() != 4) {
    throw ShapeError("BatchNorm2d(" + std::to_string(num_features()) +
                     "): expected a 4-D (N, C, H, W) input, got shape " + shape_str(input.shape()));
  }
  check_channels(input);
}

Tensor BatchNorm::forward(const Tensor& input) {
  if (!input.defined()) throw ValueError(type_name() + ": input is undefined");
  check_input(input);
  const bool use_batch_stats = is_training() || !track_;
  double factor = momentum_.value_or(0.0);
  Tensor rm, rv;
  if (track_) {
    rm = running_mean();
    rv = running_var();
  }
  if (is_training() && track_) {
    const int64_t per_channel = input.numel() / num_features_;
    if (per_channel <= 1) {
      throw ValueError(type_name() + "(" + std::to_string(num_features_) +
                       "): expected more than 1 value per channel when training, got input of shape " +
                       shape_str(input.shape()));
    }
    Tensor nb = num_batches_tracked();
    {
      NoGradGuard ng;
      add_(nb, 1);
    }
    if (!momentum_) factor = 1.0 / nb.item();  // cumulative moving average
  }
  // Running stats are updated only in training mode (eval without tracking uses batch stats).
  const bool update = is_training() && track_;
  return batch_norm(input, update || !use_batch_stats ? rm : Tensor(), update || !use_batch_stats ? rv : Tensor(),
                    weight(), bias(), use_batch_stats, factor, eps_);
}

}  // namespace st::nn
