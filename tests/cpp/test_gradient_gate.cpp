// gradient_gate: several tensors' gradients meet in one node (full backward hooks on modules called
// with several tensors).
#include <gtest/gtest.h>

#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(GradientGate, SeesAllGradientsOnceAndMayReplaceThem) {
  Tensor x = Tensor::from_vector<double>({1, 2}, {2}), y = Tensor::from_vector<double>({3, 4}, {2});
  x.set_requires_grad(true);
  y.set_requires_grad(true);
  const Tensor z = Tensor::from_vector<double>({5, 6}, {2});  // needs no gradient
  int calls = 0;
  std::vector<Tensor> seen;
  const auto gated = gradient_gate({x, y, z}, [&](const std::vector<Tensor>& g) {
    ++calls;
    seen = g;
    return std::vector<Tensor>{mul(g[0], 10.0), g[1], Tensor()};
  });
  ASSERT_EQ(gated.size(), 3u);
  EXPECT_TRUE(gated[2].same(z));
  sum(add(mul(gated[0], gated[1]), gated[2])).backward();
  EXPECT_EQ(calls, 1);
  ASSERT_TRUE(seen[0].defined() && seen[1].defined());
  EXPECT_FALSE(seen[2].defined());
  EXPECT_DOUBLE_EQ(seen[0].contiguous().data<double>()[1], 4.0);  // d/dx (x*y) = y
  EXPECT_DOUBLE_EQ(x.grad().contiguous().data<double>()[1], 40.0);
  EXPECT_DOUBLE_EQ(y.grad().contiguous().data<double>()[0], 1.0);
}

TEST(GradientGate, UnreachedAliasGivesUndefinedAndWrongCountRaises) {
  Tensor x = Tensor::from_vector<double>({1, 2}, {2}), y = Tensor::from_vector<double>({3, 4}, {2});
  x.set_requires_grad(true);
  y.set_requires_grad(true);
  std::vector<Tensor> seen;
  auto gated = gradient_gate({x, y}, [&](const std::vector<Tensor>& g) {
    seen = g;
    return g;
  });
  sum(mul(gated[0], 2.0)).backward();  // y's alias is not used
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[0].defined());
  EXPECT_FALSE(seen[1].defined());
  EXPECT_FALSE(y.grad().defined());
  gated = gradient_gate({x, y}, [](const std::vector<Tensor>& g) { return std::vector<Tensor>{g[0]}; });
  EXPECT_THROW(sum(add(gated[0], gated[1])).backward(), ValueError);
}

TEST(GradientGate, NothingToTrackReturnsTheInputs) {
  const Tensor a = ones({2});
  const auto gated = gradient_gate({a}, [](const std::vector<Tensor>& g) { return g; });
  EXPECT_TRUE(gated[0].same(a));
}
