#pragma once
// Bilinear form y_o = sum_ij x1_i W_oij x2_j + b_o (PyTorch's nn.Bilinear), composed
// from matmul, so it differentiates and runs on every device.
#include "spiraltorch/nn/module.h"

namespace st::nn {

// input1 (*, in1), input2 (*, in2) with the same leading dims; weight (out, in1, in2);
// bias (out,) or undefined. Returns (*, out).
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias = {});

// Parameters weight (out_features, in1_features, in2_features) and bias (out_features,),
// both U(-1/sqrt(in1_features), 1/sqrt(in1_features)) like PyTorch.
class Bilinear : public Module {
 public:
  Bilinear(int64_t in1_features, int64_t in2_features, int64_t out_features, bool bias = true, std::string name = "");
  Tensor forward2(const Tensor& input1, const Tensor& input2);
  // A Module's single-input forward cannot feed two inputs; it raises a clear error.
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Bilinear"; }
  int64_t in1_features() const { return in1_; }
  int64_t in2_features() const { return in2_; }
  int64_t out_features() const { return out_; }
  Tensor weight() { return *find_parameter("weight"); }
  Tensor bias() {
    Tensor* b = find_parameter("bias");
    return b ? *b : Tensor();
  }

 private:
  int64_t in1_, in2_, out_;
};

}  // namespace st::nn
