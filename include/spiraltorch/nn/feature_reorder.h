#pragma once
// FeatureReorder2d: moves image features between the channel-last (NHWC) layout and the
// canonical channel-first (NCHW) one that Conv2d and the pools use.
//   layout "NCHW": identity in both directions.
//   layout "NHWC", direction "to_canonical": out[b, c, h, w] = in[b, h, w, c];
//                  direction "from_canonical": the inverse.
// Input either flattened (batch, C*H*W) — the output is flattened too — or 4-d
// (batch, H, W, C) resp. (batch, C, H, W). Layout names are case-insensitive; the
// directions also accept "to" and "from". Gradients flow through the permutation.
#include <string>

#include "spiraltorch/nn/module.h"

namespace st::nn {

class FeatureReorder2d : public Module {
 public:
  FeatureReorder2d(int64_t channels, int64_t height, int64_t width, std::string layout = "NCHW",
                   std::string direction = "to_canonical", std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "FeatureReorder2d"; }
  int64_t channels() const { return channels_; }
  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  const std::string& layout() const { return layout_; }
  const std::string& direction() const { return direction_; }

 private:
  int64_t channels_, height_, width_;
  std::string layout_, direction_;  // normalised: "NCHW"/"NHWC", "to_canonical"/"from_canonical"
};

}  // namespace st::nn
