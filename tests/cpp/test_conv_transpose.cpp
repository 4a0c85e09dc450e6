// conv_transpose2d / conv_transpose1d: the adjoint of conv2d with the same weight (<y, conv(x)> =
// <conv_transpose(y), x>), the output-size rule, float64 gradients against finite differences, errors.
#include <gtest/gtest.h>

#include "gradcheck.h"
#include "spiraltorch/nn/conv.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using st::nn::Pair;

TEST(ConvTranspose, IsTheAdjointOfConv2d) {
  manual_seed(1);
  const Pair stride{2, 1}, padding{1, 0}, dilation{1, 2};
  const Tensor w = randn({6, 2, 3, 2}, Dtype::Float64);  // conv2d: 4 -> 6 channels, groups 2
  const Tensor x = randn({2, 4, 8, 6}, Dtype::Float64);
  const Tensor cx = nn::conv2d(x, w, {}, stride, padding, dilation, 2);
  const Tensor y = randn(cx.shape(), Dtype::Float64);
  // The transpose maps conv2d's output shape back to its input shape (output_padding covers the
  // row that the stride-2 windows skip).
  const Tensor ty = nn::conv_transpose2d(y, w, {}, stride, padding, {0, 0}, 2, dilation);
  ASSERT_EQ(ty.shape(), (Shape{2, 4, 7, 6}));
  const Tensor ty_full = nn::conv_transpose2d(y, w, {}, stride, padding, {1, 0}, 2, dilation);
  ASSERT_EQ(ty_full.shape(), x.shape());
  EXPECT_NEAR(sum(mul(cx, y)).item(), sum(mul(ty_full, x)).item(), 1e-9);
}

TEST(ConvTranspose, GradientsMatchFiniteDifferences) {
  manual_seed(2);
  const Tensor x = randn({2, 4, 3, 4}, Dtype::Float64);
  const Tensor w = randn({4, 3, 3, 2}, Dtype::Float64);
  const Tensor b = randn({6}, Dtype::Float64);
  test_util::gradcheck_all([&] { return nn::conv_transpose2d(x, w, b, {2, 2}, {1, 0}, {1, 1}, 2, {1, 1}); }, {x, w, b});
  const Tensor x1 = randn({2, 3, 5}, Dtype::Float64);
  const Tensor w1 = randn({3, 2, 3}, Dtype::Float64);
  test_util::gradcheck_all([&] { return nn::conv_transpose1d(x1, w1, {}, 3, 1, 2, 1, 2); }, {x1, w1});
}

TEST(ConvTranspose, BadArgumentsAreRefusedByName) {
  const Tensor x = randn({1, 3, 4, 4}), w = randn({3, 2, 3, 3});
  EXPECT_THROW(nn::conv_transpose2d(randn({1, 5, 4, 4}), w), ShapeError);
  EXPECT_THROW(nn::conv_transpose2d(x, w, {}, {2, 2}, {0, 0}, {2, 0}), ValueError);
  EXPECT_THROW(nn::conv_transpose2d(x, w, {}, {1, 1}, {0, 0}, {0, 0}, 2), ValueError);
  EXPECT_THROW(nn::conv_transpose2d(x, w, randn({4})), ShapeError);
  try {
    nn::conv_transpose2d(x, w, {}, {2, 2}, {0, 0}, {3, 0});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("conv_transpose2d: output_padding"), std::string::npos) << e.what();
  }
}
