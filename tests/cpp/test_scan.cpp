// Tests for the scans (src/ops/scan.cpp), flip/roll (src/ops/reorder.cpp) and poisson
// (src/ops/sampling.cpp): values against hand-computed results, gradients against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gradcheck.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

using namespace st;

namespace {

Tensor D(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector<double>(v, s); }
Tensor L(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector<int64_t>(v, s); }
std::vector<double> dv(const Tensor& t) { return t.contiguous().to_vector<double>(); }
std::vector<int64_t> lv(const Tensor& t) { return t.contiguous().to_vector<int64_t>(); }

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

}  // namespace

TEST(Cumprod, ValuesAlongEachDim) {
  const Tensor x = D({1, 2, 0, 3, 2, -1, 4, 0.5}, {2, 4});
  expect_near(dv(cumprod(x, 1)), {1, 2, 0, 0, 2, -2, -8, -4});
  expect_near(dv(cumprod(x, 0)), {1, 2, 0, 3, 2, -2, 0, 1.5});
  expect_near(dv(cumprod(x, -1)), dv(cumprod(x, 1)));
}

TEST(Cumprod, IntegersAccumulateInInt64UnlessADtypeIsGiven) {
  const Tensor x = cast(L({3, 4, 5}, {3}), Dtype::Int32);
  const Tensor y = cumprod(x, 0);
  EXPECT_EQ(y.dtype(), Dtype::Int64);
  EXPECT_EQ(lv(y), (std::vector<int64_t>{3, 12, 60}));
  const Tensor f = cumprod(x, 0, Dtype::Float64);
  EXPECT_EQ(f.dtype(), Dtype::Float64);
  expect_near(dv(f), {3, 12, 60});
}

TEST(Cumprod, GradientThroughZeros) {
  // No zero, one zero (first, middle, last) and two zeros in a line.
  for (const std::vector<double>& row : {std::vector<double>{0.5, -1.5, 2.0, 0.7},
                                         {0, 1.5, -2.0, 0.7},
                                         {0.5, 1.5, 0, 0.7},
                                         {0.5, 1.5, 2.0, 0},
                                         {0.5, 0, 2.0, 0}}) {
    test_util::gradcheck([](const Tensor& t) { return cumprod(t, 0); }, D(row, {4}));
  }
  test_util::gradcheck([](const Tensor& t) { return cumprod(t, 1); },
                       D({1.1, 0, -0.4, 2.0, 0.3, -0.9, 1.7, 0, 0.6, 1.2, -2.1, 0.8}, {3, 4}));
  test_util::gradcheck([](const Tensor& t) { return cumprod(t, 0); },
                       D({1.1, 0, -0.4, 2.0, 0.3, -0.9, 1.7, 0, 0.6, 1.2, -2.1, 0.8}, {3, 4}));
}

TEST(Cumprod, SecondDerivative) {
  // d/dx of the gradient of sum(cumprod(x)) at x = (a, b, c): the Hessian's row sums, by hand.
  const Tensor x = D({0.5, 2.0, -1.5}, {3});
  Tensor leaf = x.clone();
  leaf.set_requires_grad(true);
  const Tensor y = sum(cumprod(leaf, 0));
  const Tensor g = st::grad({y}, {leaf}, {}, true, true)[0];
  const auto h = st::grad({sum(g)}, {leaf})[0];
  // f = a + ab + abc; Hessian [[0, 1 + c, b], [1 + c, 0, a], [b, a, 0]].
  const double a = 0.5, b = 2.0, c = -1.5;
  expect_near(dv(h), {1 + c + b, 1 + c + a, b + a}, 1e-12);
}

TEST(Logcumsumexp, ValuesAndStability) {
  const Tensor x = D({0.5, -1.0, 2.0, 0.0}, {4});
  std::vector<double> want;
  double acc = 0;
  for (const double v : {0.5, -1.0, 2.0, 0.0}) {
    acc += std::exp(v);
    want.push_back(std::log(acc));
  }
  expect_near(dv(logcumsumexp(x, 0)), want);
  // Terms whose exp overflows: log(e^1000 + e^1000) = 1000 + log 2.
  expect_near(dv(logcumsumexp(D({1000, 1000}, {2}), 0)), {1000, 1000 + std::log(2.0)});
  const double inf = std::numeric_limits<double>::infinity();
  const auto v = dv(logcumsumexp(D({-inf, -inf, 1.0}, {3}), 0));
  EXPECT_EQ(v[0], -inf);
  EXPECT_EQ(v[1], -inf);
  EXPECT_NEAR(v[2], 1.0, 1e-15);
  EXPECT_EQ(logcumsumexp(L({1, 2}, {2}), 0).dtype(), Dtype::Float32);
}

TEST(Logcumsumexp, Gradient) {
  test_util::gradcheck([](const Tensor& t) { return logcumsumexp(t, 1); },
                       D({0.3, -1.2, 2.5, 0.1, 1.0, 0.7, -0.4, 3.0}, {2, 4}));
  test_util::gradcheck([](const Tensor& t) { return logcumsumexp(t, 0); },
                       D({0.3, -1.2, 2.5, 0.1, 1.0, 0.7, -0.4, 3.0}, {2, 4}));
}

TEST(Cummax, ValuesIndicesTiesAndNaN) {
  const double nan = std::nan("");
  const auto [v, i] = cummax(D({1, 3, 3, 2, 5}, {5}), 0);
  expect_near(dv(v), {1, 3, 3, 3, 5});
  EXPECT_EQ(lv(i), (std::vector<int64_t>{0, 1, 2, 2, 4}));  // the latest among equal values
  const auto [vn, in] = cummax(D({1, nan, 4, nan, 2}, {5}), 0);
  const auto vals = dv(vn);
  EXPECT_EQ(vals[0], 1);
  for (int k = 1; k < 5; ++k) EXPECT_TRUE(std::isnan(vals[k])) << k;
  EXPECT_EQ(lv(in), (std::vector<int64_t>{0, 1, 1, 3, 3}));  // every NaN takes over, numbers after one do not
  const auto [mv, mi] = cummin(L({4, 2, 2, 5, 1}, {5}), 0);
  EXPECT_EQ(lv(mv), (std::vector<int64_t>{4, 2, 2, 2, 1}));
  EXPECT_EQ(lv(mi), (std::vector<int64_t>{0, 1, 2, 2, 4}));
  // Along dim 0 of a matrix.
  const auto [cv, ci] = cummax(D({1, 5, 3, 2, 2, 7}, {3, 2}), 0);
  expect_near(dv(cv), {1, 5, 3, 5, 3, 7});
  EXPECT_EQ(lv(ci), (std::vector<int64_t>{0, 0, 1, 0, 1, 2}));
}

TEST(Cummax, GradientGoesToTheChosenElements) {
  const Tensor x = D({0.3, -1.2, 2.5, 0.1, 1.0, 0.7, -0.4, 3.0}, {2, 4});
  test_util::gradcheck([](const Tensor& t) { return cummax(t, 1).first; }, x);
  test_util::gradcheck([](const Tensor& t) { return cummin(t, 1).first; }, x);
  test_util::gradcheck([](const Tensor& t) { return cummax(t, 0).first; }, x);
}

TEST(Flip, ValuesAndGradient) {
  const Tensor x = D({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_near(dv(flip(x, {1})), {3, 2, 1, 6, 5, 4});
  expect_near(dv(flip(x, {0})), {4, 5, 6, 1, 2, 3});
  expect_near(dv(flip(x, {0, -1})), {6, 5, 4, 3, 2, 1});
  const Tensor copy = flip(x, {});
  expect_near(dv(copy), dv(x));
  EXPECT_FALSE(copy.storage() == x.storage());
  EXPECT_THROW(flip(x, {1, -1}), ValueError);  // dim 1 twice
  EXPECT_THROW(flip(x, {2}), IndexError);
  test_util::gradcheck([](const Tensor& t) { return flip(t, {0, 1}); }, x);
}

TEST(Roll, ValuesAndGradient) {
  const Tensor x = D({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_near(dv(roll(x, {1}, {1})), {3, 1, 2, 6, 4, 5});
  expect_near(dv(roll(x, {-1}, {1})), {2, 3, 1, 5, 6, 4});
  expect_near(dv(roll(x, {4}, {1})), {3, 1, 2, 6, 4, 5});  // shifts wrap
  expect_near(dv(roll(x, {1, 1}, {0, 1})), {6, 4, 5, 3, 1, 2});
  expect_near(dv(roll(x, {2})), {5, 6, 1, 2, 3, 4});  // flattened
  EXPECT_THROW(roll(x, {1, 2}, {0}), ValueError);
  test_util::gradcheck([](const Tensor& t) { return roll(t, {1, -2}, {0, 1}); }, x);
}

TEST(Poisson, MomentsMatchTheRate) {
  // For each rate, the sample mean and variance of 20000 draws lie within 6 standard errors of it.
  Generator gen(1234);
  for (const double rate : {0.3, 4.0, 9.5, 10.0, 37.0, 2500.0}) {
    const int64_t n = 20000;
    const Tensor draws = poisson(full({n}, rate, Dtype::Float64), &gen);
    const auto v = dv(draws);
    double mean = 0, sq = 0;
    for (const double d : v) {
      ASSERT_EQ(d, std::floor(d));
      ASSERT_GE(d, 0);
      mean += d;
    }
    mean /= n;
    for (const double d : v) sq += (d - mean) * (d - mean);
    const double var = sq / (n - 1);
    EXPECT_NEAR(mean, rate, 6 * std::sqrt(rate / n)) << "rate " << rate;
    // The variance of the sample variance is about 2 rate^2 / n + rate / n for a Poisson law.
    EXPECT_NEAR(var, rate, 6 * std::sqrt((2 * rate * rate + rate) / n)) << "rate " << rate;
  }
}

TEST(Poisson, GeneratorDrivenAndChecked) {
  const Tensor rates = D({0, 1.5, 20, 300}, {4});
  Generator a(7), b(7);
  EXPECT_EQ(dv(poisson(rates, &a)), dv(poisson(rates, &b)));
  EXPECT_EQ(dv(poisson(rates, &a))[0], 0.0);  // rate 0 gives 0
  const Tensor f = poisson(cast(rates, Dtype::Float32), &a);
  EXPECT_EQ(f.dtype(), Dtype::Float32);
  EXPECT_THROW(poisson(D({1, -0.5}, {2})), ValueError);
  EXPECT_THROW(poisson(D({1, std::nan("")}, {2})), ValueError);
  EXPECT_THROW(poisson(D({2e6}, {1})), ValueError);
  EXPECT_THROW(poisson(L({1}, {1})), DtypeError);
}
