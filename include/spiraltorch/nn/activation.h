#pragma once
// Parameter-free activation layers; each forwards to its op in ops.h.
#include <string>

#include "spiraltorch/nn/module.h"

namespace st::nn {

class ReLU : public Module {
 public:
  explicit ReLU(std::string name = "") : Module(std::move(name)) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "ReLU"; }
};

// approximate: "none" (exact, erf) or "tanh".
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none", std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "GELU"; }
  const std::string& approximate() const { return approximate_; }

 private:
  std::string approximate_;
};

class SiLU : public Module {
 public:
  explicit SiLU(std::string name = "") : Module(std::move(name)) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "SiLU"; }
};

class Tanh : public Module {
 public:
  explicit Tanh(std::string name = "") : Module(std::move(name)) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Tanh"; }
};

class Sigmoid : public Module {
 public:
  explicit Sigmoid(std::string name = "") : Module(std::move(name)) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Sigmoid"; }
};

class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim = -1, std::string name = "") : Module(std::move(name)), dim_(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Softmax"; }
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};

}  // namespace st::nn
