#include "spiraltorch/zspace/wave_gate.h"

#include <cmath>

#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/ops.h"
#include "zspace/checks.h"

namespace st::nn {

WaveGate::WaveGate(int64_t features, double curvature, std::string name)
    : Module(std::move(name)), features_(features), curvature_(curvature) {
  zspace::detail::check_ball_layer(features, curvature, "WaveGate");
  register_parameter("gate_weight", init::kaiming_uniform({features, features}, features));
  register_parameter("gate_bias", init::kaiming_uniform({features}, features));
  register_parameter("value_weight", init::kaiming_uniform({features, features}, features));
  register_parameter("value_bias", init::kaiming_uniform({features}, features));
}

void WaveGate::check_input(const Tensor& input) const {
  if (input.dim() == 0 || input.shape().back() != features_) {
    throw ShapeError("WaveGate(" + std::to_string(features_) + "): input of shape " + shape_str(input.shape()) +
                     " has the wrong last dim");
  }
}

Tensor WaveGate::gate(const Tensor& input) {
  check_input(input);
  return sigmoid(linear(input, *find_parameter("gate_weight"), *find_parameter("gate_bias")));
}

Tensor WaveGate::forward(const Tensor& input) {
  const Tensor g = gate(input);
  const Tensor v = tanh(linear(input, *find_parameter("value_weight"), *find_parameter("value_bias")));
  // g * v + (1 - g) * x, written as x + g * (v - x).
  const Tensor mixed = add(input, mul(g, sub(v, input)));
  return geometry::clip_to_ball(geometry::expmap0(mixed, curvature_), curvature_);
}

}  // namespace st::nn
