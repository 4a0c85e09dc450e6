#pragma once
// Channel-wise dropout (PyTorch's Dropout1d / Dropout2d): in training every channel of
// every sample is zeroed as a whole with probability p and the kept channels are scaled
// by 1/(1-p); in eval mode the identity. Alpha dropout (AlphaDropout / FeatureAlphaDropout)
// for SELU networks. Built from rand, compare, multiply and add.
#include <optional>

#include "spiraltorch/generator.h"
#include "spiraltorch/nn/activation.h"
#include "spiraltorch/nn/module.h"

namespace st::nn {

// `spatial_dims` is 1 for dropout1d ((N, C, L) or (C, L)) and 2 for dropout2d
// ((N, C, H, W) or (C, H, W)). Draws from `gen`, or the global generator when null.
Tensor channel_dropout(const Tensor& input, int64_t spatial_dims, double p = 0.5, bool training = true,
                       Generator* gen = nullptr);
Tensor dropout1d(const Tensor& input, double p = 0.5, bool training = true, Generator* gen = nullptr);
Tensor dropout2d(const Tensor& input, double p = 0.5, bool training = true, Generator* gen = nullptr);

// Alpha dropout: dropped elements take SELU's saturation value -1.7581 and the result is mapped by
// a x + b with a = ((1 - p)(1 + p 1.7581^2))^-1/2, b = a 1.7581 p (dropped: -a 1.7581 (1 - p)), which
// keeps a zero-mean, unit-variance input so (PyTorch's constants). In eval mode the identity; p = 1
// gives zeros. feature_alpha_dropout draws one keep/drop per (sample, channel) of (N, C, *) input.
Tensor alpha_dropout(const Tensor& input, double p = 0.5, bool training = false, Generator* gen = nullptr);
Tensor feature_alpha_dropout(const Tensor& input, double p = 0.5, bool training = false, Generator* gen = nullptr);

class AlphaDropout : public Module {
 public:
  explicit AlphaDropout(double p = 0.5, std::string name = "", std::optional<uint64_t> seed = std::nullopt)
      : AlphaDropout(p, false, std::move(name), seed) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return feature_ ? "FeatureAlphaDropout" : "AlphaDropout"; }
  double p() const { return p_; }

 protected:
  // feature: one draw per channel (FeatureAlphaDropout).
  AlphaDropout(double p, bool feature, std::string name, std::optional<uint64_t> seed);

 private:
  double p_;
  bool feature_;
  std::optional<Generator> generator_;
};

class FeatureAlphaDropout : public AlphaDropout {
 public:
  explicit FeatureAlphaDropout(double p = 0.5, std::string name = "", std::optional<uint64_t> seed = std::nullopt)
      : AlphaDropout(p, true, std::move(name), seed) {}
};

class Dropout1d : public Module, public InplaceOption {
 public:
  explicit Dropout1d(double p = 0.5, std::string name = "", std::optional<uint64_t> seed = std::nullopt);
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Dropout1d"; }
  double p() const { return p_; }

 private:
  double p_;
  std::optional<Generator> generator_;
};

class Dropout2d : public Module, public InplaceOption {
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
