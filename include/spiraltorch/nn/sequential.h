#pragma once
#include "spiraltorch/nn/module.h"

namespace st::nn {

// Runs children in order. Unnamed children are keyed by their index ("0::weight").
class Sequential : public Module {
 public:
  explicit Sequential(std::string name = "") : Module(std::move(name)) {}
  void add(std::shared_ptr<Module> layer);
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Sequential"; }
  size_t size() const { return children().size(); }
  std::shared_ptr<Module> at(int64_t index) const;
};

}  // namespace st::nn
