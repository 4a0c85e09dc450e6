#pragma once
// Sub-pixel rearrangement (PyTorch's pixel_shuffle / pixel_unshuffle) as a reshape,
// permute and reshape, so it differentiates and runs on every device.
#include "spiraltorch/nn/module.h"

namespace st::nn {

// (*, C * r^2, H, W) -> (*, C, H * r, W * r).
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
// (*, C, H * r, W * r) -> (*, C * r^2, H, W); the inverse of pixel_shuffle.
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

class PixelShuffle : public Module {
 public:
  explicit PixelShuffle(int64_t upscale_factor, std::string name = "");
  Tensor forward(const Tensor& input) override { return pixel_shuffle(input, r_); }
  std::string type_name() const override { return "PixelShuffle"; }
  int64_t upscale_factor() const { return r_; }

 private:
  int64_t r_;
};

class PixelUnshuffle : public Module {
 public:
  explicit PixelUnshuffle(int64_t downscale_factor, std::string name = "");
  Tensor forward(const Tensor& input) override { return pixel_unshuffle(input, r_); }
  std::string type_name() const override { return "PixelUnshuffle"; }
  int64_t downscale_factor() const { return r_; }

 private:
  int64_t r_;
};

}  // namespace st::nn
