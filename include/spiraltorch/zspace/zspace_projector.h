#pragma once
// ZSpaceProjector: a bounded residual map into the Poincare ball,
//   y = exp_0(x + tanh(x W^T + b)),
// so every output row lies strictly inside the ball of radius 1/sqrt|c| while the
// residual keeps the identity reachable (W = 0, b = 0 gives exp_0(x)). Usable inside
// Sequential and transformer stacks; parameters "<name>::weight" (features, features)
// and "<name>::bias" load through the checked handoff like Linear's.
#include "spiraltorch/nn/module.h"

namespace st::nn {

class ZSpaceProjector : public Module {
 public:
  ZSpaceProjector(int64_t features, double curvature = -1.0, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "ZSpaceProjector"; }
  int64_t features() const { return features_; }
  double curvature() const { return curvature_; }

 private:
  int64_t features_;
  double curvature_;
};

}  // namespace st::nn
