#pragma once
// Channel-wise dropout (PyTorch's Dropout1d / Dropout2d): in training every channel of
// every sample is zeroed as a whole with probability p and the kept channels are scaled
// by 1/(1-p); in eval mode the identity. Built from rand, compare and multiply.
#include <optional>

#include "spiraltorch/generator.h"
#include "spiraltorch/nn/module.h"

namespace st::nn {

// `spatial_dims` is 1 for dropout1d ((N, C, L) or (C, L)) and 2 for dropout2d
// ((N, C, H, W) or (C, H, W)). Draws from `gen`, or the global generator when null.
Tensor channel_dropout(const Tensor& input, int64_t spatial_dims, double p = 0.5, bool training = true,
                       Generator* gen = nullptr);
Tensor dropout1d(const Tensor& input, double p = 0.5, bool training = true, Generator* gen = nullptr);
Tensor dropout2d(const Tensor& input, double p = 0.5, bool training = true, Generator* gen = nullptr);

class Dropout1d : public Module {
 public:
  explicit Dropout1d(double p = 0.5, std::string name = "", std::optional<uint64_t> seed = std::nullopt);
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Dropout1d"; }
  double p() const { return p_; }

 private:
  double p_;
  std::optional<Generator> generator_;
};

class Dropout2d : public Module {
 public:
  explicit Dropout2d(double p = 0.5, std::string name = "", std::optional<uint64_t> seed = std::nullopt);
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Dropout2d"; }
  double p() const { return p_; }

 private:
  double p_;
  std::optional<Generator> generator_;
};

}  // namespace st::nn
