#pragma once
#include "spiraltorch/nn/module.h"

namespace st::nn {

// Merges dims start_dim..end_dim into one (a view when strides allow).
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1, std::string name = "")
      : Module(std::move(name)), start_(start_dim), end_(end_dim) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Flatten"; }
  int64_t start_dim() const { return start_; }
  int64_t end_dim() const { return end_; }

 private:
  int64_t start_, end_;
};

}  // namespace st::nn
