#include "spiraltorch/nn/layer_norm.h"

#include "spiraltorch/nn/functional.h"
#include "spiraltorch/ops.h"

namespace st::nn {

LayerNorm::LayerNorm(Shape normalized_shape, double eps, bool elementwise_affine, bool bias, std::string name)
    : Module(std::move(name)), shape_(std::move(normalized_shape)), eps_(eps), affine_(elementwise_affine) {
  if (shape_.empty()) throw ValueError("LayerNorm: normalized_shape must name at least one dim");
  for (int64_t d : shape_) {
    if (d <= 0) throw ValueError("LayerNorm: normalized_shape must be positive, got " + shape_str(shape_));
  }
  if (!(eps >= 0)) throw ValueError("LayerNorm: eps must be non-negative, got " + std::to_string(eps));
  if (affine_) {
    register_parameter("weight", ones(shape_));
    if (bias) register_parameter("bias", zeros(shape_));
  }
}

Tensor LayerNorm::forward(const Tensor& input) {
  if (!input.defined()) throw ValueError("LayerNorm: input is undefined");
  const int64_t k = static_cast<int64_t>(shape_.size());
  bool match = input.dim() >= k;
  for (int64_t i = 0; match && i < k; ++i) match = input.shape()[input.dim() - k + i] == shape_[i];
  if (!match) {
    throw ShapeError("LayerNorm(" + shape_str(shape_) + "): input of shape " + shape_str(input.shape()) +
                     " does not end in normalized_shape " + shape_str(shape_));
  }
  return layer_norm(input, shape_, weight(), bias(), eps_);
}

}  // namespace st::nn
