#pragma once
// Parameter-free activation layers; each forwards to its op in ops.h.
#include <string>

#include "spiraltorch/nn/module.h"
#include "spiraltorch/ops.h"

namespace st::nn {

// PyTorch's inplace=True for elementwise layers: the result is written into the input tensor
// (autograd-correct: the layer computes on a private copy when the input is part of a graph,
// so what its backward saved is not overwritten, and the input then carries the layer's history;
// a leaf that requires grad is refused as in PyTorch). Same values either way; the memory PyTorch
// saves with it is not saved here.
class InplaceOption {
 public:
  void set_inplace(bool inplace) { inplace_ = inplace; }
  bool inplace() const { return inplace_; }

 protected:
  // f(input), or f(input) written into input when inplace() (op names the layer in errors).
  template <typename F>
  Tensor apply_fn(const Tensor& input, const F& f, const char* op) const;

 private:
  bool inplace_ = false;
};

class ReLU : public Module, public InplaceOption {
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

class SiLU : public Module, public InplaceOption {
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

// ---- PyTorch's other activation layers; each forwards to its op in ops.h ----

// Layers without settings.
#define ST_PLAIN_ACTIVATION(Cls)                                     \
  class Cls : public Module, public InplaceOption {                  \
   public:                                                           \
    explicit Cls(std::string name = "") : Module(std::move(name)) {} \
    Tensor forward(const Tensor& input) override;                    \
    std::string type_name() const override { return #Cls; }          \
  };
ST_PLAIN_ACTIVATION(SELU)
ST_PLAIN_ACTIVATION(Mish)
ST_PLAIN_ACTIVATION(Hardswish)
ST_PLAIN_ACTIVATION(Hardsigmoid)
ST_PLAIN_ACTIVATION(ReLU6)
ST_PLAIN_ACTIVATION(LogSigmoid)
ST_PLAIN_ACTIVATION(Softsign)
ST_PLAIN_ACTIVATION(Tanhshrink)
#undef ST_PLAIN_ACTIVATION

class LeakyReLU : public Module, public InplaceOption {
 public:
  explicit LeakyReLU(double negative_slope = 0.01, std::string name = "")
      : Module(std::move(name)), negative_slope_(negative_slope) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "LeakyReLU"; }
  double negative_slope() const { return negative_slope_; }

 private:
  double negative_slope_;
};

class ELU : public Module, public InplaceOption {
 public:
  explicit ELU(double alpha = 1.0, std::string name = "") : Module(std::move(name)), alpha_(alpha) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "ELU"; }
  double alpha() const { return alpha_; }

 private:
  double alpha_;
};

// alpha must be nonzero (ValueError).
class CELU : public Module, public InplaceOption {
 public:
  explicit CELU(double alpha = 1.0, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "CELU"; }
  double alpha() const { return alpha_; }

 private:
  double alpha_;
};

// log(1 + exp(beta x)) / beta, linear where beta x > threshold.
class Softplus : public Module {
 public:
  explicit Softplus(double beta = 1.0, double threshold = 20.0, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Softplus"; }
  double beta() const { return beta_; }
  double threshold() const { return threshold_; }

 private:
  double beta_, threshold_;
};

// min_val <= max_val (ValueError otherwise).
class Hardtanh : public Module, public InplaceOption {
 public:
  explicit Hardtanh(double min_val = -1.0, double max_val = 1.0, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Hardtanh"; }
  double min_val() const { return min_val_; }
  double max_val() const { return max_val_; }

 private:
  double min_val_, max_val_;
};

class Threshold : public Module, public InplaceOption {
 public:
  Threshold(double threshold, double value, std::string name = "")
      : Module(std::move(name)), threshold_(threshold), value_(value) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Threshold"; }
  double threshold() const { return threshold_; }
  double value() const { return value_; }

 private:
  double threshold_, value_;
};

// Learnable negative slope: parameter "weight" of shape (num_parameters,) filled with `init`;
// num_parameters is 1 or the number of channels (dim 1 of the input).
class PReLU : public Module {
 public:
  explicit PReLU(int64_t num_parameters = 1, double init = 0.25, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "PReLU"; }
  int64_t num_parameters() const { return num_parameters_; }
  Tensor weight() { return *find_parameter("weight"); }

 private:
  int64_t num_parameters_;
};

class GLU : public Module {
 public:
  explicit GLU(int64_t dim = -1, std::string name = "") : Module(std::move(name)), dim_(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "GLU"; }
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};

class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim = -1, std::string name = "") : Module(std::move(name)), dim_(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "LogSoftmax"; }
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};

class Softmin : public Module {
 public:
  explicit Softmin(int64_t dim = -1, std::string name = "") : Module(std::move(name)), dim_(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Softmin"; }
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};

template <typename F>
Tensor InplaceOption::apply_fn(const Tensor& input, const F& f, const char* op) const {
  if (!inplace_) return f(input);
  Tensor target = input;
  return apply_inplace_(target, f, op);
}

}  // namespace st::nn
