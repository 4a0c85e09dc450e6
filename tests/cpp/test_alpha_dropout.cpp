// alpha_dropout / feature_alpha_dropout: zero mean and unit variance kept, one draw per channel,
// the gradient is the kept scale, the identity outside training.
#include <gtest/gtest.h>

#include <cmath>

#include "spiraltorch/nn/channel_dropout.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(AlphaDropout, KeepsTheMomentsAndScalesTheGradient) {
  manual_seed(12);
  const Tensor x = randn({200000}, Dtype::Float64);
  const Tensor y = nn::alpha_dropout(x, 0.25, true);
  EXPECT_NEAR(mean(y).item(), 0.0, 0.01);
  EXPECT_NEAR(std::sqrt(var(y).item()), 1.0, 0.01);
  EXPECT_EQ(nn::alpha_dropout(x, 0.25, false).data<double>(), x.data<double>());  // eval: the input itself

  Tensor leaf = randn({64}, Dtype::Float64);
  leaf.set_requires_grad(true);
  sum(nn::alpha_dropout(leaf, 0.5, true)).backward();
  const double a = 1.0 / std::sqrt((1.7580993408473766 * 1.7580993408473766 * 0.5 + 1.0) * 0.5);
  for (double g : leaf.grad().to_vector<double>()) EXPECT_TRUE(g == 0.0 || std::abs(g - a) < 1e-12) << g;

  const Tensor f = nn::feature_alpha_dropout(ones({4, 6, 3}), 0.5, true);
  const auto fv = f.to_vector<float>();
  for (int64_t c = 0; c < 24; ++c) {
    EXPECT_EQ(fv[c * 3], fv[c * 3 + 1]);
    EXPECT_EQ(fv[c * 3], fv[c * 3 + 2]);
  }
  EXPECT_THROW(nn::AlphaDropout(-0.1), ValueError);
}
