// Composed activations (src/ops/activations.cpp) and normalisation layers (src/nn/normalization.cpp):
// finite-difference gradient checks in float64, PyTorch's gradients at the kinks, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "spiraltorch/nn/activation.h"
#include "spiraltorch/nn/normalization.h"
#include "spiraltorch/nn/sequential.h"
#include "spiraltorch/spiraltorch.h"
#include "gradcheck.h"

using namespace st;
using st::test_util::gradcheck;
using st::test_util::gradcheck_all;

namespace {

Tensor from(const std::vector<double>& v) {
  Tensor t = zeros({static_cast<int64_t>(v.size())}, Dtype::Float64);
  for (size_t i = 0; i < v.size(); ++i) t.data<double>()[i] = v[i];
  return t;
}

// The gradient of sum(f(x)) at the points v.
std::vector<double> grad_at(const std::function<Tensor(const Tensor&)>& f, const std::vector<double>& v) {
  Tensor x = from(v);
  x.set_requires_grad(true);
  sum(f(x)).backward();
  return x.grad().to_vector<double>();
}

}  // namespace

TEST(Activations, PointwiseGradientsMatchFiniteDifferences) {
  manual_seed(5);
  const Tensor x = mul(randn({3, 5}, Dtype::Float64), 2.5);
  gradcheck([](const Tensor& t) { return selu(t); }, x);
  gradcheck([](const Tensor& t) { return celu(t, 0.7); }, x);
  gradcheck([](const Tensor& t) { return mish(t); }, x);
  gradcheck([](const Tensor& t) { return hardswish(t); }, x);
  gradcheck([](const Tensor& t) { return hardsigmoid(t); }, x);
  gradcheck([](const Tensor& t) { return hardtanh(t, -0.5, 2.0); }, x);
  gradcheck([](const Tensor& t) { return logsigmoid(t); }, x);
  gradcheck([](const Tensor& t) { return softsign(t); }, x);
  gradcheck([](const Tensor& t) { return tanhshrink(t); }, x);
  gradcheck([](const Tensor& t) { return threshold(t, 0.3, -2.0); }, x);
  gradcheck([](const Tensor& t) { return glu(t, 0); }, randn({4, 3}, Dtype::Float64));
  gradcheck([](const Tensor& t) { return softmin(t, 1); }, x);
}

TEST(Activations, ValuesAndGradientsAtTheKinks) {
  // hardtanh/relu6/hardsigmoid pass no gradient at their bounds; hardswish's is 0 at -3 and 1 at 3
  // (PyTorch's conventions).
  EXPECT_EQ(grad_at([](const Tensor& t) { return hardtanh(t, -1.0, 1.0); }, {-1.0, 0.5, 1.0}),
            (std::vector<double>{0.0, 1.0, 0.0}));
  EXPECT_EQ(grad_at([](const Tensor& t) { return relu6(t); }, {0.0, 3.0, 6.0, 7.0}),
            (std::vector<double>{0.0, 1.0, 0.0, 0.0}));
  EXPECT_EQ(grad_at([](const Tensor& t) { return hardswish(t); }, {-4.0, -3.0, 3.0, 4.0}),
            (std::vector<double>{0.0, 0.0, 1.0, 1.0}));
  EXPECT_EQ(grad_at([](const Tensor& t) { return hardsigmoid(t); }, {-3.0, 0.0, 3.0}),
            (std::vector<double>{0.0, 1.0 / 6.0, 0.0}));
  EXPECT_EQ(grad_at([](const Tensor& t) { return celu(t, 2.0); }, {0.0})[0], 1.0);
  EXPECT_EQ(relu6(from({-1.0, 2.0, 9.0})).to_vector<double>(), (std::vector<double>{0.0, 2.0, 6.0}));
  EXPECT_EQ(threshold(from({0.5, 0.1, 0.7}), 0.5, 9.0).to_vector<double>(), (std::vector<double>{9.0, 9.0, 0.7}));
  const auto ls = logsigmoid(from({-100.0, 0.0, 100.0})).to_vector<double>();
  EXPECT_DOUBLE_EQ(ls[0], -100.0);
  EXPECT_DOUBLE_EQ(ls[1], -std::log(2.0));
  EXPECT_NEAR(ls[2], 0.0, 1e-30);
  EXPECT_TRUE(std::isnan(hardtanh(from({NAN}), -1.0, 1.0).to_vector<double>()[0]));
}

TEST(Activations, PReLUGradientsForInputAndWeight) {
  manual_seed(8);
  const Tensor x = randn({2, 3, 4}, Dtype::Float64);
  const Tensor w = from({0.1, -0.3, 0.7});
  gradcheck([&](const Tensor& t) { return prelu(t, w); }, x);
  gradcheck([&](const Tensor& t) { return prelu(x, t); }, w);
  gradcheck([&](const Tensor& t) { return prelu(x, t); }, from({0.25}));
  EXPECT_THROW(prelu(x, from({0.1, 0.2})), ShapeError);
  EXPECT_THROW(prelu(x, w.to(Dtype::Float32)), DtypeError);
}

TEST(Activations, LayersWorkInsideSequential) {
  nn::Sequential seq;
  seq.add(std::make_shared<nn::Hardtanh>(-2.0, 2.0));
  seq.add(std::make_shared<nn::PReLU>(3, 0.5));
  seq.add(std::make_shared<nn::GroupNorm>(1, 3));
  const auto params = seq.named_parameters();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].first, "1::weight");
  const Tensor y = seq.forward(randn({2, 3, 4}));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
}

TEST(Activations, ErrorsNameTheOperationAndValues) {
  try {
    glu(zeros({2, 3}), 1);
    FAIL() << "glu accepted an odd size";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("size 3"), std::string::npos) << e.what();
  }
  try {
    nn::GroupNorm(4, 6);
    FAIL() << "GroupNorm accepted 6 channels in 4 groups";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("num_channels=6"), std::string::npos) << m;
    EXPECT_NE(m.find("num_groups=4"), std::string::npos) << m;
  }
  EXPECT_THROW(celu(zeros({2}), 0.0), ValueError);
  EXPECT_THROW(hardtanh(zeros({2}), 1.0, -1.0), ValueError);
  EXPECT_THROW(selu(zeros({2}, Dtype::Int64)), DtypeError);
}

TEST(Normalization, GradientsMatchFiniteDifferences) {
  manual_seed(21);
  const Tensor x = randn({2, 6, 3}, Dtype::Float64);
  const Tensor w = randn({6}, Dtype::Float64), b = randn({6}, Dtype::Float64);
  gradcheck([&](const Tensor& t) { return nn::group_norm(t, 3, w, b); }, x, 1e-5);
  gradcheck([&](const Tensor& t) { return nn::group_norm(x, 2, t, b); }, w, 1e-5);
  gradcheck([&](const Tensor& t) { return nn::group_norm(x, 2, w, t); }, b, 1e-5);
  const Tensor rw = randn({3}, Dtype::Float64);
  gradcheck([&](const Tensor& t) { return nn::rms_norm(t, {3}, rw); }, x, 1e-5);
  gradcheck([&](const Tensor& t) { return nn::rms_norm(x, {3}, t, 1e-3); }, rw, 1e-5);
  gradcheck([](const Tensor& t) { return nn::normalize(t, 2.0, 1); }, x, 1e-5);
  gradcheck([](const Tensor& t) { return nn::normalize(t, 3.0, -1); }, x, 1e-5);
  const Tensor other = randn({2, 1, 3}, Dtype::Float64);
  gradcheck([&](const Tensor& t) { return nn::cosine_similarity(t, other, -1); }, x, 1e-5);
}

TEST(Normalization, ValuesAgainstDirectFormulas) {
  // group_norm with one group per channel of a (1, 2, 2) input: each channel standardised.
  const Tensor x = reshape(from({1.0, 3.0, -2.0, 2.0}), {1, 2, 2});
  const auto y = nn::group_norm(x, 2, {}, {}, 0.0).to_vector<double>();
  EXPECT_NEAR(y[0], -1.0, 1e-12);
  EXPECT_NEAR(y[1], 1.0, 1e-12);
  EXPECT_NEAR(y[2], -1.0, 1e-12);
  // rms_norm of (3, 4): rms = sqrt(12.5); eps defaults to float64's epsilon.
  const auto r = nn::rms_norm(from({3.0, 4.0}), {2}).to_vector<double>();
  EXPECT_NEAR(r[0], 3.0 / std::sqrt(12.5), 1e-12);
  const auto c =
      nn::cosine_similarity(reshape(from({1.0, 0.0}), {1, 2}), reshape(from({1.0, 1.0}), {1, 2})).to_vector<double>();
  EXPECT_NEAR(c[0], 1.0 / std::sqrt(2.0), 1e-12);
  nn::RMSNorm rms({2});
  EXPECT_EQ(rms.named_parameters()[0].first, "weight");
  EXPECT_THROW(rms.forward(zeros({2, 3})), ShapeError);
}
