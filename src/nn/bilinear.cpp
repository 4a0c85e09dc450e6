#include "spiraltorch/nn/bilinear.h"

#include <cmath>

#include "spiraltorch/error.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/ops.h"

namespace st::nn {

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias) {
  const char* op = "bilinear";
  if (!input1.defined() || !input2.defined() || !weight.defined()) {
    throw ValueError(std::string(op) + ": input1, input2 and weight are required");
  }
  if (weight.dim() != 3) {
    throw ShapeError(std::string(op) + ": weight must be 3-d (out, in1, in2), got shape " + shape_str(weight.shape()));
  }
  const int64_t O = weight.shape()[0], I1 = weight.shape()[1], I2 = weight.shape()[2];
  if (input1.dim() == 0 || input2.dim() == 0 || input1.shape().back() != I1 || input2.shape().back() != I2) {
    throw ShapeError(std::string(op) + ": inputs of shapes " + shape_str(input1.shape()) + " and " +
                     shape_str(input2.shape()) + " do not match weight of shape " + shape_str(weight.shape()) +
                     " (expected last dims " + std::to_string(I1) + " and " + std::to_string(I2) + ")");
  }
  const Shape lead(input1.shape().begin(), input1.shape().end() - 1);
  if (Shape(input2.shape().begin(), input2.shape().end() - 1) != lead) {
    throw ShapeError(std::string(op) + ": inputs of shapes " + shape_str(input1.shape()) + " and " +
                     shape_str(input2.shape()) + " must have the same leading dims");
  }
  if (bias.defined() && (bias.dim() != 1 || bias.shape()[0] != O)) {
    throw ShapeError(std::string(op) + ": bias must have shape (" + std::to_string(O) + ",), got " +
                     shape_str(bias.shape()));
  }
  int64_t B = 1;
  for (int64_t d : lead) B *= d;
  // (B, in1) @ (in1, out*in2) -> (B, out, in2), then a batched product with x2: (B, out).
  const Tensor x1 = reshape(input1, {B, I1}), x2 = reshape(input2, {B, I2, 1});
  const Tensor w = reshape(permute(weight, {1, 0, 2}), {I1, O * I2});
  Tensor y = squeeze(matmul(reshape(matmul(x1, w), {B, O, I2}), x2), 2);
  if (bias.defined()) y = add(y, bias);
  Shape os = lead;
  os.push_back(O);
  return reshape(y, os);
}

Bilinear::Bilinear(int64_t in1_features, int64_t in2_features, int64_t out_features, bool bias, std::string name)
    : Module(std::move(name)), in1_(in1_features), in2_(in2_features), out_(out_features) {
  if (in1_features <= 0 || in2_features <= 0 || out_features <= 0) {
    throw ValueError("Bilinear: in1_features, in2_features and out_features must be positive, got " +
                     std::to_string(in1_features) + ", " + std::to_string(in2_features) + " and " +
                     std::to_string(out_features));
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(in1_features));
  register_parameter("weight", init::uniform({out_features, in1_features, in2_features}, bound));
  if (bias) register_parameter("bias", init::uniform({out_features}, bound));
}

Tensor Bilinear::forward2(const Tensor& input1, const Tensor& input2) {
  return bilinear(input1, input2, weight(), bias());
}

Tensor Bilinear::forward(const Tensor&) {
  throw ValueError("Bilinear: forward takes two inputs (input1, input2); call forward2 / the module with both");
}

}  // namespace st::nn
