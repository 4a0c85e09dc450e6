#include "spiraltorch/zspace/zspace_projector.h"

#include <cmath>

#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/ops.h"
#include "zspace/checks.h"

namespace st::nn {

ZSpaceProjector::ZSpaceProjector(int64_t features, double curvature, std::string name)
    : Module(std::move(name)), features_(features), curvature_(curvature) {
  zspace::detail::check_ball_layer(features, curvature, "ZSpaceProjector");
  register_parameter("weight", init::kaiming_uniform({features, features}, features));
  register_parameter("bias", zeros({features}));
}

Tensor ZSpaceProjector::forward(const Tensor& input) {
  if (input.dim() == 0 || input.shape().back() != features_) {
    throw ShapeError("ZSpaceProjector(" + std::to_string(features_) + "): input of shape " + shape_str(input.shape()) +
                     " has the wrong last dim");
  }
  const Tensor h = add(input, tanh(linear(input, *find_parameter("weight"), *find_parameter("bias"))));
  // tanh saturates in float32: clip so rows stay strictly inside the ball.
  return geometry::clip_to_ball(geometry::expmap0(h, curvature_), curvature_);
}

}  // namespace st::nn
