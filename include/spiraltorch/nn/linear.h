#pragma once
#include "spiraltorch/nn/module.h"

namespace st::nn {

// y = x W^T + b with W of shape (out_features, in_features), like PyTorch and HF.
// Kaiming-uniform initialisation from the global generator.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Linear"; }
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  Tensor weight() { return *find_parameter("weight"); }
  Tensor bias() {
    Tensor* b = find_parameter("bias");
    return b ? *b : Tensor();
  }

 private:
  int64_t in_, out_;
};

// Functional linear: x W^T + b (b may be undefined).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});

}  // namespace st::nn
