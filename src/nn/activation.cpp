#include "spiraltorch/nn/activation.h"

#include "spiraltorch/nn/functional.h"
#include "spiraltorch/ops.h"

namespace st::nn {

Tensor ReLU::forward(const Tensor& input) { return relu(input); }

GELU::GELU(std::string approximate, std::string name) : Module(std::move(name)), approximate_(std::move(approximate)) {
  if (approximate_ != "none" && approximate_ != "tanh") {
    throw ValueError("GELU: approximate must be 'none' or 'tanh', got '" + approximate_ + "'");
  }
}

Tensor GELU::forward(const Tensor& input) { return st::gelu(input, approximate_ == "tanh"); }

Tensor SiLU::forward(const Tensor& input) { return silu(input); }
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

}  // namespace st::nn
