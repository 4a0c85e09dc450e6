// Autograd engine: finite-difference checks in float64, accumulation, errors.
#include <gtest/gtest.h>

#include <functional>

#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

// Compares d(sum(f(x) * w))/dx from autograd with central differences.
void gradcheck(const std::function<Tensor(const Tensor&)>& f, Tensor x, double tol = 1e-6) {
  x.set_requires_grad(true);
  manual_seed(7);
  const Tensor w = randn(f(x).shape(), Dtype::Float64);
  sum(mul(f(x), w)).backward();
  const auto analytic = x.grad().to_vector<double>();
  NoGradGuard ng;
  Tensor probe = x.detach().clone();
  double* p = probe.data<double>();
  const double eps = 1e-6;
  for (int64_t i = 0; i < probe.numel(); ++i) {
    const double orig = p[i];
    p[i] = orig + eps;
    const double up = sum(mul(f(probe), w)).item();
    p[i] = orig - eps;
    const double down = sum(mul(f(probe), w)).item();
    p[i] = orig;
    EXPECT_NEAR(analytic[i], (up - down) / (2 * eps), tol) << "element " << i;
  }
}

}  // namespace

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
