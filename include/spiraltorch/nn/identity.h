#pragma once
#include "spiraltorch/nn/module.h"

namespace st::nn {

// Returns its input unchanged (fills a layer slot that should do nothing).
class Identity : public Module {
 public:
  explicit Identity(std::string name = "") : Module(std::move(name)) {}
  Tensor forward(const Tensor& input) override { return input; }
  std::string type_name() const override { return "Identity"; }
};

}  // namespace st::nn
