#pragma once
#include "spiraltorch/nn/module.h"

namespace st::nn {

// Normalises over the trailing dims `normalized_shape`; weight (ones) and bias (zeros)
// of that shape when elementwise_affine (bias can be switched off like PyTorch's bias=False).
class LayerNorm : public Module {
 public:
  LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true, bool bias = true,
            std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "LayerNorm"; }
  const Shape& normalized_shape() const { return shape_; }
  double eps() const { return eps_; }
  bool elementwise_affine() const { return affine_; }
  Tensor weight() {
    Tensor* w = find_parameter("weight");
    return w ? *w : Tensor();
  }
  Tensor bias() {
    Tensor* b = find_parameter("bias");
    return b ? *b : Tensor();
  }

 private:
  Shape shape_;
  double eps_;
  bool affine_;
};

}  // namespace st::nn
