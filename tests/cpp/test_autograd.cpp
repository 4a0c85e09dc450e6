// Autograd engine: finite-difference checks in float64, accumulation, errors.
#include <gtest/gtest.h>

#include <functional>

#include "spiraltorch/spiraltorch.h"
#include "gradcheck.h"

using namespace st;
using st::test_util::gradcheck;
using st::test_util::gradcheck_all;

namespace {}  // namespace

TEST(Autograd, ElementwiseAndBroadcast) {
  manual_seed(3);
  const Tensor other = randn({1, 4}, Dtype::Float64);
  gradcheck([&](const Tensor& x) { return mul(tanh(x), add(other, 2.0)); }, randn({3, 4}, Dtype::Float64));
  gradcheck([&](const Tensor& x) { return div(exp(x), add(mul(x, x), 1.0)); }, randn({2, 3}, Dtype::Float64));
  gradcheck([&](const Tensor& x) { return gelu(x); }, randn({5}, Dtype::Float64));
  gradcheck([&](const Tensor& x) { return gelu(x, true); }, randn({5}, Dtype::Float64));
  gradcheck([&](const Tensor& x) { return sigmoid(silu(x)); }, randn({5}, Dtype::Float64));
}

TEST(Autograd, ReductionsSoftmaxMatmul) {
  manual_seed(4);
  gradcheck([](const Tensor& x) { return softmax(x, 1); }, randn({3, 4}, Dtype::Float64));
  gradcheck([](const Tensor& x) { return log_softmax(x, 0); }, randn({3, 4}, Dtype::Float64));
  gradcheck([](const Tensor& x) { return var(x, {1}); }, randn({3, 4}, Dtype::Float64));
  gradcheck([](const Tensor& x) { return logsumexp(x, {0}); }, randn({3, 4}, Dtype::Float64));
  gradcheck([](const Tensor& x) { return norm(x, 2.0, {1}); }, randn({3, 4}, Dtype::Float64));
  const Tensor b = randn({2, 4, 5}, Dtype::Float64);
  gradcheck([&](const Tensor& x) { return matmul(x, b); }, randn({3, 4}, Dtype::Float64));
}

TEST(Autograd, ProdWithZero) {
  Tensor x = Tensor::from_vector<double>({2.0, 0.0, 3.0}, {3});
  gradcheck([](const Tensor& v) { return prod(v); }, x);
}

TEST(Autograd, AccumulatesAcrossBackward) {
  Tensor x = ones({2}, Dtype::Float64).set_requires_grad(true);
  sum(mul(x, 3.0)).backward();
  sum(mul(x, 3.0)).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{6.0, 6.0}));
}

TEST(Autograd, FirstGradientIsTakenUncopiedWhenUnshared) {
  // W's gradient through t(W) is the backward GEMM's own output (no transposing copy, no clone);
  // the add's backward hands one tensor to both leaves, so those two are copies and stay apart.
  Tensor w = randn({5, 3}, Dtype::Float64).set_requires_grad(true);
  const Tensor x = randn({4, 3}, Dtype::Float64);
  sum(matmul(x, t(w))).backward();
  ASSERT_TRUE(w.grad().is_contiguous());
  EXPECT_EQ(w.grad().storage()->nbytes(), size_t{15 * 8});
  EXPECT_EQ(w.grad().storage().use_count(), 1);
  EXPECT_TRUE(allclose(w.grad(), matmul(ones({5, 4}, Dtype::Float64), x)));

  Tensor a = ones({3}).set_requires_grad(true), b = ones({3}).set_requires_grad(true);
  sum(add(a, b)).backward();
  EXPECT_NE(a.grad().storage().get(), b.grad().storage().get());
  sum(mul(a, 2.0)).backward();
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{3.0f, 3.0f, 3.0f}));
  EXPECT_EQ(b.grad().to_vector<float>(), (std::vector<float>{1.0f, 1.0f, 1.0f}));
}

TEST(Autograd, ReuseWithoutRetainGraphFails) {
  Tensor x = ones({2}, Dtype::Float64).set_requires_grad(true);
  Tensor y = sum(exp(x));
  y.backward();
  EXPECT_THROW(y.backward(), SpiralError);
}

TEST(Autograd, InplaceAfterSaveIsDetected) {
  Tensor x = ones({2}, Dtype::Float64).set_requires_grad(true);
  Tensor y = mul(x, 2.0);
  Tensor z = exp(y);  // saves its output
  Tensor s = sum(z);
  {
    NoGradGuard ng;
    fill_(z, 0.0);
  }
  EXPECT_THROW(s.backward(), SpiralError);
  EXPECT_THROW(add_(x, Scalar(1.0)), SpiralError);  // leaf that requires grad
}

TEST(Autograd, GradFunction) {
  Tensor x = Tensor::from_vector<double>({1.0, 2.0}, {2}).set_requires_grad(true);
  Tensor y = sum(mul(x, x));
  auto g = grad({y}, {x});
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{2.0, 4.0}));
  EXPECT_FALSE(x.grad().defined());
}

// ---- gradient hooks (register_hook) ----

namespace {
Tensor vec64(std::vector<double> v) { return Tensor::from_vector<double>(v, {static_cast<int64_t>(v.size())}); }
}  // namespace

TEST(GradHooks, LeafHookSeesTheSummedGradientOnceAndMayReplaceIt) {
  Tensor x = vec64({1, 2, 3});
  x.set_requires_grad(true);
  std::vector<std::vector<double>> seen;
  HookHandle h = register_hook(x, [&](const Tensor& g) {
    seen.push_back(g.to_vector<double>());
    return mul(g, 10.0);
  });
  // Two uses of x: d/dx sum(x*x + 3x) = 2x + 3, reaching the hook as one sum.
  sum(add(mul(x, x), mul(x, 3.0))).backward();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{50, 70, 90}));
  h.remove();
  h.remove();  // idempotent
  x.set_grad(Tensor());
  sum(mul(x, 3.0)).backward();
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{3, 3, 3}));
}

TEST(GradHooks, NonLeafHookChangesWhatFlowsOnAndWhatIsRetained) {
  Tensor x = vec64({1, -2});
  x.set_requires_grad(true);
  Tensor y = mul(x, 2.0);
  y.retain_grad();
  std::vector<int> order;
  HookHandle a = register_hook(y, [&](const Tensor& g) {
    order.push_back(1);
    return mul(g, 3.0);
  });
  HookHandle b = register_hook(y, [&](const Tensor& g) {
    order.push_back(2);
    EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{3, 3}));  // after the first hook
    return Tensor();                                                // keep it
  });
  sum(y).backward();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{3, 3}));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{6, 6}));
}

TEST(GradHooks, AutogradGradRunsLeafAndNonLeafHooks) {
  Tensor x = vec64({1, 2});
  x.set_requires_grad(true);
  Tensor y = mul(x, x);
  HookHandle hx = register_hook(x, [](const Tensor& g) { return add(g, 1.0); });
  HookHandle hy = register_hook(y, [](const Tensor& g) { return mul(g, 0.5); });
  const std::vector<Tensor> gs = grad({sum(y)}, {x, y});
  EXPECT_EQ(gs[1].to_vector<double>(), (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(gs[0].to_vector<double>(), (std::vector<double>{2, 3}));  // 0.5 * 2x + 1
  EXPECT_FALSE(x.grad().defined());
}

TEST(GradHooks, PostAccumulateHookStillRunsAfterAHookedLeaf) {
  Tensor w = vec64({1, 1});
  w.set_requires_grad(true);
  HookHandle h = register_hook(w, [](const Tensor& g) { return mul(g, 2.0); });
  std::vector<double> at_post;
  const int64_t id =
      register_post_accumulate_grad_hook(w, [&](const Tensor& leaf) { at_post = leaf.grad().to_vector<double>(); });
  sum(add(mul(w, 1.0), mul(w, 4.0))).backward();
  EXPECT_EQ(at_post, (std::vector<double>{10, 10}));
  remove_post_accumulate_grad_hook(id);
}

TEST(GradHooks, BadHooksAndTargetsAreClearErrors) {
  Tensor c = vec64({1, 2});
  try {
    register_hook(c, [](const Tensor& g) { return g; });
    FAIL() << "no error";
  } catch (const SpiralError& e) {
    EXPECT_NE(std::string(e.what()).find("does not require grad"), std::string::npos) << e.what();
  }
  Tensor x = vec64({1, 2});
  x.set_requires_grad(true);
  HookHandle h = register_hook(x, [](const Tensor&) { return vec64({1, 2, 3}); });
  try {
    sum(mul(x, 2.0)).backward();
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("shape (3,)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(2,)"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(x.grad().defined());  // the refused gradient never reached .grad
  h.remove();
  HookHandle d = register_hook(x, [](const Tensor& g) { return g.to(Dtype::Float32); });
  EXPECT_THROW(sum(mul(x, 2.0)).backward(), DtypeError);
}
