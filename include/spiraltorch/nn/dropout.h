#pragma once
#include "spiraltorch/nn/module.h"

namespace st::nn {

// In training mode zeroes each element with probability p (global generator) and
// scales the kept ones by 1/(1-p); in eval mode the identity.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Dropout"; }
  double p() const { return p_; }

 private:
  double p_;
};

}  // namespace st::nn
