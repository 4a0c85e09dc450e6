// lgamma / digamma: known values, the recurrence Gamma(x + 1) = x Gamma(x) across the reflection
// point, and gradients (digamma, trigamma) against finite differences in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gradcheck.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(Special, KnownValuesAndTheRecurrence) {
  const std::vector<double> xs{-3.7, -0.3, 0.2, 0.5, 1.0, 2.5, 7.0, 40.0};
  const Tensor x = Tensor::from_vector(xs, {8});
  const auto lg = lgamma(x).to_vector<double>(), lg1 = lgamma(add(x, 1.0)).to_vector<double>();
  const auto dg = digamma(x).to_vector<double>(), dg1 = digamma(add(x, 1.0)).to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_NEAR(lg[i], std::lgamma(xs[i]), 1e-12 * std::max(1.0, std::abs(lg[i]))) << xs[i];
    EXPECT_NEAR(lg1[i] - lg[i], std::log(std::abs(xs[i])), 1e-12) << xs[i];  // log|Gamma(x+1)/Gamma(x)| = log|x|
    EXPECT_NEAR(dg1[i] - dg[i], 1.0 / xs[i], 1e-11) << xs[i];                // psi(x+1) = psi(x) + 1/x
  }
  EXPECT_NEAR(digamma(Tensor::from_vector(std::vector<double>{1.0}, {1})).item(), -0.57721566490153286, 1e-13);
}

TEST(Special, GradientsMatchFiniteDifferences) {
  const Tensor x = Tensor::from_vector(std::vector<double>{-2.3, -0.6, 0.3, 1.7, 4.2, 12.0}, {6});
  test_util::gradcheck([](const Tensor& t) { return lgamma(t); }, x, 1e-6);
  test_util::gradcheck([](const Tensor& t) { return digamma(t); }, x, 1e-5);
}
