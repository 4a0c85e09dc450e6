// Host-memory counters and what autograd keeps alive between forward and backward.
#include <gtest/gtest.h>

#include "spiraltorch/nn/transformer.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(Memory, CpuCountersFollowStorages) {
  memory::cpu_reset_peak();
  const size_t base = memory::cpu_allocated();
  {
    const Tensor t = zeros({256, 256});
    EXPECT_EQ(memory::cpu_allocated() - base, 256u * 256u * 4u);
  }
  EXPECT_EQ(memory::cpu_allocated(), base);
  EXPECT_EQ(memory::cpu_max_allocated() - base, 256u * 256u * 4u);
  memory::cpu_reset_peak();
  EXPECT_EQ(memory::cpu_max_allocated(), memory::cpu_allocated());
}

TEST(Memory, AddBackwardKeepsNoOperands) {
  Tensor x = randn({128, 128});
  x.set_requires_grad(true);
  const size_t base = memory::cpu_allocated();
  Tensor y;
  {
    const Tensor h = exp(x);  // keeps its output: h itself
    y = add(h, x);
  }
  // h stays (ExpBackward's output); nothing else beyond y.
  EXPECT_EQ(memory::cpu_allocated() - base, 2u * 128u * 128u * 4u);
  sum(y).backward();
  // The backward freed ExpBackward's saved output though y's graph is still referenced.
  EXPECT_EQ(memory::cpu_allocated() - base, 2u * 128u * 128u * 4u);  // y and x.grad
  EXPECT_TRUE(allclose(x.grad(), add(exp(x.detach()), 1.0)));
}

TEST(Memory, GeluKeepsOnlyItsInput) {
  Tensor x = randn({64, 64});
  x.set_requires_grad(true);
  const Tensor h = mul(x, 2.0);
  const size_t base = memory::cpu_allocated();
  const Tensor y = gelu(h);
  EXPECT_EQ(memory::cpu_allocated() - base, 64u * 64u * 4u);  // y only: h is kept by the caller too
}

TEST(Memory, GradientRouteRebuildsHistoryWithoutTheBase) {
  Tensor w = randn({4, 6}, Dtype::Float64);
  w.set_requires_grad(true);
  const Tensor view = narrow(mul(w, 3.0), 1, 2, 3);
  const GradientRoute route(view);
  ASSERT_TRUE(route.requires_grad());
  const Tensor copy = view.detach().contiguous();
  const Tensor routed = route.attach(copy);
  EXPECT_TRUE(routed.requires_grad());
  sum(mul(routed, routed)).backward();
  // d/dw sum((3 w[:, 2:5])^2) = 18 w on those columns, 0 elsewhere.
  const auto g = w.grad().to_vector<double>(), wv = w.detach().to_vector<double>();
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 6; ++j) EXPECT_NEAR(g[i * 6 + j], j >= 2 && j < 5 ? 18 * wv[i * 6 + j] : 0.0, 1e-12);
  }
  EXPECT_FALSE(GradientRoute(copy).requires_grad());
  EXPECT_TRUE(GradientRoute(copy).attach(copy).same(copy));
}
