// apply_inplace_ and the layers' inplace option: the input holds the result, gradients flow to
// the input's history as for the out-of-place op, leaves that require grad are refused.
#include <gtest/gtest.h>

#include "spiraltorch/nn/activation.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(Inplace, LayersWriteIntoTheirInputWithTheSameGradients) {
  manual_seed(9);
  const Tensor base = randn({6}, Dtype::Float64);
  Tensor a = base.detach().clone(), b = base.detach().clone();
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  nn::LeakyReLU in_place(0.1), out_of_place(0.1);
  in_place.set_inplace(true);
  Tensor ya = mul(a, 3.0);
  const Tensor ra = in_place(ya);
  const Tensor rb = out_of_place(mul(b, 3.0));
  EXPECT_EQ(ya.to_vector<double>(), rb.to_vector<double>());  // the input now holds the result
  EXPECT_EQ(ra.to_vector<double>(), rb.to_vector<double>());
  sum(mul(ra, ra)).backward();
  sum(mul(rb, rb)).backward();
  EXPECT_EQ(a.grad().to_vector<double>(), b.grad().to_vector<double>());

  nn::ReLU relu_layer;
  relu_layer.set_inplace(true);
  Tensor leaf = randn({3});
  leaf.set_requires_grad(true);
  EXPECT_THROW(relu_layer(leaf), SpiralError);
  Tensor plain = Tensor::from_vector(std::vector<float>{-1.0f, 2.0f}, {2});
  apply_inplace_(plain, [](const Tensor& x) { return relu(x); }, "relu");
  EXPECT_EQ(plain.to_vector<float>(), (std::vector<float>{0.0f, 2.0f}));
  EXPECT_THROW(apply_inplace_(plain, [](const Tensor& x) { return sum(x); }, "sum"), ShapeError);
}
