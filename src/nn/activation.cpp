#include "spiraltorch/nn/activation.h"

#include "spiraltorch/nn/functional.h"
#include "spiraltorch/ops.h"

namespace st::nn {

Tensor ReLU::forward(const Tensor& input) {
  return apply_fn(input, [](const Tensor& x) { return relu(x); }, "ReLU");
}

GELU::GELU(std::string approximate, std::string name) : Module(std::move(name)), approximate_(std::move(approximate)) {
  if (approximate_ != "none" && approximate_ != "tanh") {
    throw ValueError("GELU: approximate must be 'none' or 'tanh', got '" + approximate_ + "'");
  }
}

Tensor GELU::forward(const Tensor& input) { return st::gelu(input, approximate_ == "tanh"); }

Tensor SiLU::forward(const Tensor& input) {
  return apply_fn(input, [](const Tensor& x) { return silu(x); }, "SiLU");
}
Tensor Tanh::forward(const Tensor& input) { return tanh(input); }
Tensor Sigmoid::forward(const Tensor& input) { return sigmoid(input); }

Tensor Softmax::forward(const Tensor& input) {
  if (!input.defined()) throw ValueError("Softmax: input is undefined");
  const int64_t nd = std::max<int64_t>(input.dim(), 1);
  if (dim_ < -nd || dim_ >= nd) {
    throw ShapeError("Softmax(dim=" + std::to_string(dim_) + "): input of shape " + shape_str(input.shape()) +
                     " has no dim " + std::to_string(dim_));
  }
  return softmax(input, dim_);
}

// ---- PyTorch's other activation layers ----

Tensor SELU::forward(const Tensor& input) {
  return apply_fn(input, [](const Tensor& x) { return selu(x); }, "SELU");
}
Tensor Mish::forward(const Tensor& input) {
  return apply_fn(input, [](const Tensor& x) { return mish(x); }, "Mish");
}
Tensor Hardswish::forward(const Tensor& input) {
  return apply_fn(input, [](const Tensor& x) { return hardswish(x); }, "Hardswish");
}
Tensor Hardsigmoid::forward(const Tensor& input) {
  return apply_fn(input, [](const Tensor& x) { return hardsigmoid(x); }, "Hardsigmoid");
}
Tensor ReLU6::forward(const Tensor& input) {
  return apply_fn(input, [](const Tensor& x) { return relu6(x); }, "ReLU6");
}
Tensor LogSigmoid::forward(const Tensor& input) { return logsigmoid(input); }
Tensor Softsign::forward(const Tensor& input) { return softsign(input); }
Tensor Tanhshrink::forward(const Tensor& input) { return tanhshrink(input); }
Tensor LeakyReLU::forward(const Tensor& input) {
  return apply_fn(input, [this](const Tensor& x) { return leaky_relu(x, negative_slope_); }, "LeakyReLU");
}
Tensor ELU::forward(const Tensor& input) {
  return apply_fn(input, [this](const Tensor& x) { return elu(x, alpha_); }, "ELU");
}

CELU::CELU(double alpha, std::string name) : Module(std::move(name)), alpha_(alpha) {
  if (alpha == 0.0) throw ValueError("CELU: alpha must be nonzero, got 0");
}
Tensor CELU::forward(const Tensor& input) {
  return apply_fn(input, [this](const Tensor& x) { return celu(x, alpha_); }, "CELU");
}

Softplus::Softplus(double beta, double threshold, std::string name)
    : Module(std::move(name)), beta_(beta), threshold_(threshold) {
  if (beta == 0.0) throw ValueError("Softplus: beta must be nonzero, got 0");
}
Tensor Softplus::forward(const Tensor& input) {
  if (!input.defined()) throw ValueError("Softplus: input is undefined");
  return softplus(input, beta_, threshold_);
}

Hardtanh::Hardtanh(double min_val, double max_val, std::string name)
    : Module(std::move(name)), min_val_(min_val), max_val_(max_val) {
  if (min_val > max_val) {
    throw ValueError("Hardtanh: min_val (" + std::to_string(min_val) + ") must not exceed max_val (" +
                     std::to_string(max_val) + ")");
  }
}
Tensor Hardtanh::forward(const Tensor& input) {
  return apply_fn(input, [this](const Tensor& x) { return hardtanh(x, min_val_, max_val_); }, "Hardtanh");
}

Tensor Threshold::forward(const Tensor& input) {
  return apply_fn(input, [this](const Tensor& x) { return st::threshold(x, threshold_, value_); }, "Threshold");
}

PReLU::PReLU(int64_t num_parameters, double init, std::string name)
    : Module(std::move(name)), num_parameters_(num_parameters) {
  if (num_parameters < 1) {
    throw ValueError("PReLU: num_parameters must be at least 1, got " + std::to_string(num_parameters));
  }
  register_parameter("weight", full({num_parameters}, init, Dtype::Float32));
}
Tensor PReLU::forward(const Tensor& input) { return prelu(input, weight()); }

Tensor GLU::forward(const Tensor& input) { return glu(input, dim_); }
Tensor LogSoftmax::forward(const Tensor& input) {
  if (!input.defined()) throw ValueError("LogSoftmax: input is undefined");
  return log_softmax(input, dim_);
}
Tensor Softmin::forward(const Tensor& input) { return softmin(input, dim_); }

}  // namespace st::nn
