#include "spiraltorch/nn/feature_reorder.h"

#include <algorithm>
#include <cctype>

#include "spiraltorch/ops.h"

namespace st::nn {

FeatureReorder2d::FeatureReorder2d(int64_t channels, int64_t height, int64_t width, std::string layout,
                                   std::string direction, std::string name)
    : Module(std::move(name)), channels_(channels), height_(height), width_(width) {
  if (channels <= 0 || height <= 0 || width <= 0) {
    throw ValueError("FeatureReorder2d: channels, height and width must be positive, got " + std::to_string(channels) +
                     ", " + std::to_string(height) + ", " + std::to_string(width));
  }
  std::string upper = layout;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char ch) { return std::toupper(ch); });
  if (upper != "NCHW" && upper != "NHWC") {
    throw ValueError("FeatureReorder2d: layout must be 'NCHW' or 'NHWC', got '" + layout + "'");
  }
  layout_ = upper;
  if (direction == "to_canonical" || direction == "to") {
    direction_ = "to_canonical";
  } else if (direction == "from_canonical" || direction == "from") {
    direction_ = "from_canonical";
  } else {
    throw ValueError("FeatureReorder2d: direction must be 'to_canonical' or 'from_canonical', got '" + direction + "'");
  }
}

Tensor FeatureReorder2d::forward(const Tensor& input) {
  const int64_t C = channels_, H = height_, W = width_;
  const bool to = direction_ == "to_canonical";
  const Shape in_4d = to && layout_ == "NHWC" ? Shape{H, W, C} : Shape{C, H, W};
  const bool flat = input.dim() == 2 && input.shape()[1] == C * H * W;
  const bool four = input.dim() == 4 && Shape(input.shape().begin() + 1, input.shape().end()) == in_4d;
  if (!flat && !four) {
    throw ShapeError("FeatureReorder2d(" + std::to_string(C) + ", " + std::to_string(H) + ", " + std::to_string(W) +
                     ", " + layout_ + ", " + direction_ + "): input must be (batch, " + std::to_string(C * H * W) +
                     ") or (batch, " + shape_str(in_4d).substr(1) + ", got " + shape_str(input.shape()));
  }
  if (layout_ == "NCHW") return input;
  const int64_t B = input.shape()[0];
  const Tensor x = flat ? reshape(input, {B, in_4d[0], in_4d[1], in_4d[2]}) : input;
  const Tensor y = to ? permute(x, {0, 3, 1, 2}) : permute(x, {0, 2, 3, 1});
  return flat ? reshape(y, {B, C * H * W}) : y.contiguous();
}

}  // namespace st::nn
