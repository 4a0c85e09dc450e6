#include "spiraltorch/nn/linear.h"
#include "spiraltorch/autocast.h"

#include <cmath>

#include "spiraltorch/nn/init.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace init {
Tensor uniform(const Shape& shape, double bound, Dtype dtype) { return st::uniform(-bound, bound, shape, dtype); }
Tensor kaiming_uniform(const Shape& shape, int64_t fan_in, Dtype dtype) {
  return uniform(shape, fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0, dtype);
}
}  // namespace init

Tensor linear(const Tensor& input_in, const Tensor& weight_in, const Tensor& bias_in) {
  // autocast's lower-precision list: the bias too, so the add stays in the region's dtype.
  const Tensor input = autocast::to_lower(input_in), weight = autocast::to_lower(weight_in),
               bias = autocast::to_lower(bias_in);
  if (input.dim() == 0 || input.shape().back() != weight.shape().back()) {
    throw ShapeError("linear: input of shape " + shape_str(input.shape()) + " does not match weight of shape " +
                     shape_str(weight.shape()) + " (expected last dim " + std::to_string(weight.shape().back()) + ")");
  }
  Tensor out = matmul(input, t(weight));
  return bias.defined() ? add(out, bias) : out;
}

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, std::string name)
    : Module(std::move(name)), in_(in_features), out_(out_features) {
  if (in_features <= 0 || out_features <= 0) {
    throw ValueError("Linear: in_features and out_features must be positive, got " + std::to_string(in_features) +
                     " and " + std::to_string(out_features));
  }
  register_parameter("weight", init::kaiming_uniform({out_features, in_features}, in_features));
  if (bias) register_parameter("bias", init::kaiming_uniform({out_features}, in_features));
}

Tensor Linear::forward(const Tensor& input) {
  if (input.dim() == 0 || input.shape().back() != in_) {
    throw ShapeError("Linear(" + std::to_string(in_) + ", " + std::to_string(out_) + "): input of shape " +
                     shape_str(input.shape()) + " has last dim " +
                     (input.dim() ? std::to_string(input.shape().back()) : std::string("none")) + ", expected " +
                     std::to_string(in_));
  }
  return linear(input, weight(), bias());
}

}  // namespace st::nn
