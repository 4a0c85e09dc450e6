#pragma once
// WaveGate: a data-dependent gate between a candidate and the input (a highway unit),
// with the result mapped into the Poincare ball of curvature c:
//   g = sigma(x W_g^T + b_g),  v = tanh(x W_v^T + b_v),  y = exp_0(g * v + (1 - g) * x)
// Applied to the last dim of any (..., features) input, so per position of a sequence.
// g near 0 passes x through (up to exp_0), g near 1 replaces it by v. Parameters:
// "<name>::gate_weight", "<name>::value_weight" (features, features) and
// "<name>::gate_bias", "<name>::value_bias" (features), PyTorch's Linear initialisation.
// Upstream's WaveGate (a fixed elementwise gate; ../shared/reference/upstream-nn.md §3.6)
// does not depend on the input.
#include "spiraltorch/nn/module.h"

namespace st::nn {

class WaveGate : public Module {
 public:
  WaveGate(int64_t features, double curvature = -1.0, std::string name = "");
  Tensor forward(const Tensor& input) override;
  // The gate g for an input, for inspection (same shape as the input).
  Tensor gate(const Tensor& input);
  std::string type_name() const override { return "WaveGate"; }
  int64_t features() const { return features_; }
  double curvature() const { return curvature_; }

 private:
  void check_input(const Tensor& input) const;
  int64_t features_;
  double curvature_;
};

}  // namespace st::nn
