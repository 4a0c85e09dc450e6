// Tests for bernoulli, multinomial and randperm (src/ops/sampling.cpp): frequencies over many draws
// within a few standard errors, the same draws from the same seed, and errors naming the op and values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "spiraltorch/ops.h"
#include "expect_error.h"

using st::test::expect_error;
using namespace st;

namespace {

std::vector<double> dv(const Tensor& t) { return cast(t, Dtype::Float64).contiguous().to_vector<double>(); }
std::vector<int64_t> lv(const Tensor& t) { return t.contiguous().to_vector<int64_t>(); }

}  // namespace

TEST(Bernoulli, FrequenciesFollowTheProbabilities) {
  const std::vector<double> probs = {0.0, 0.05, 0.5, 0.9, 1.0};
  const int64_t n = 20000;
  Generator gen(3);
  for (const Dtype dt : {Dtype::Float64, Dtype::Float32}) {
    const Tensor p = cast(expand(reshape(Tensor::from_vector<double>(probs, {5}), {1, 5}), {n, 5}), dt);
    const Tensor draws = bernoulli(p, &gen);
    EXPECT_EQ(draws.dtype(), dt);
    const auto v = dv(draws);
    for (size_t j = 0; j < probs.size(); ++j) {
      double hits = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double d = v[i * 5 + j];
        ASSERT_TRUE(d == 0.0 || d == 1.0);
        hits += d;
      }
      const double se = std::sqrt(probs[j] * (1 - probs[j]) / n);
      EXPECT_NEAR(hits / n, probs[j], 6 * se + 1e-12) << "p=" << probs[j];
    }
  }
}

TEST(Bernoulli, ScalarProbabilityKeepsTheInputDtype) {
  Generator gen(5);
  const Tensor x = zeros({40000}, Dtype::Int64);
  const Tensor draws = bernoulli(x, 0.25, &gen);
  EXPECT_EQ(draws.dtype(), Dtype::Int64);
  const auto v = lv(draws);
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  EXPECT_NEAR(mean, 0.25, 6 * std::sqrt(0.25 * 0.75 / v.size()));
}

TEST(Bernoulli, SameSeedSameDrawsAndChecks) {
  const Tensor p = full({1000}, 0.3, Dtype::Float64);
  Generator a(11), b(11);
  EXPECT_EQ(dv(bernoulli(p, &a)), dv(bernoulli(p, &b)));
  EXPECT_NE(dv(bernoulli(p, &a)), dv(bernoulli(p, &a)));  // the stream moves on
  manual_seed(4);
  const auto first = dv(bernoulli(p));
  manual_seed(4);
  EXPECT_EQ(dv(bernoulli(p)), first);
  expect_error<ValueError>([] { bernoulli(Tensor::from_vector<double>({0.5, 1.5}, {2})); },
                           {"bernoulli", "[0, 1]", "1.5"});
  expect_error<ValueError>([] { bernoulli(Tensor::from_vector<double>({std::nan("")}, {1})); }, {"bernoulli", "nan"});
  expect_error<ValueError>([] { bernoulli(zeros({2}), -0.1); }, {"bernoulli", "-0.1"});
  expect_error<DtypeError>([] { bernoulli(zeros({2}, Dtype::Int64)); }, {"bernoulli", "int64"});
  EXPECT_EQ(bernoulli(zeros({0, 3})).shape(), (Shape{0, 3}));
}

TEST(Multinomial, WithReplacementFrequencies) {
  const std::vector<double> probs = {0.1, 0.0, 0.6, 0.3};
  const int64_t n = 40000;
  Generator gen(8);
  // Unnormalised weights give the same law.
  const Tensor w = mul(Tensor::from_vector<double>(probs, {4}), 5.0);
  const auto draws = lv(multinomial(w, n, true, &gen));
  ASSERT_EQ(draws.size(), static_cast<size_t>(n));
  std::vector<double> freq(4, 0.0);
  for (const int64_t d : draws) freq.at(d) += 1.0 / n;
  for (size_t j = 0; j < probs.size(); ++j) {
    EXPECT_NEAR(freq[j], probs[j], 6 * std::sqrt(probs[j] * (1 - probs[j]) / n) + 1e-12) << "category " << j;
  }
}

TEST(Multinomial, WithoutReplacementDrawsDistinctCategoriesSequentially) {
  const std::vector<double> probs = {0.1, 0.0, 0.6, 0.3};
  const Tensor w = Tensor::from_vector<double>(probs, {4});
  Generator gen(9);
  const int64_t trials = 6000;
  // Two rows (one reversed): each draw is 3 distinct categories, never the zero one.
  const Tensor rows = stack({w, flip(w, {0})});
  std::vector<double> first(4, 0.0), second_after_2(4, 0.0);
  double after_2 = 0;
  for (int64_t t = 0; t < trials; ++t) {
    const auto d = lv(multinomial(rows, 3, false, &gen));
    ASSERT_EQ(d.size(), 6u);
    for (int r = 0; r < 2; ++r) {
      std::vector<int64_t> row(d.begin() + 3 * r, d.begin() + 3 * r + 3);
      std::sort(row.begin(), row.end());
      EXPECT_EQ(row, (r == 0 ? std::vector<int64_t>{0, 2, 3} : std::vector<int64_t>{0, 1, 3}));
    }
    first[d[0]] += 1.0 / trials;
    if (d[0] == 2) {
      after_2 += 1;
      second_after_2[d[1]] += 1;
    }
  }
  // The first draw follows probs; the second, given the first was 2, follows probs without it.
  for (size_t j = 0; j < 4; ++j) {
    EXPECT_NEAR(first[j], probs[j], 6 * std::sqrt(probs[j] * (1 - probs[j]) / trials) + 1e-12);
  }
  EXPECT_NEAR(second_after_2[0] / after_2, 0.25, 6 * std::sqrt(0.25 * 0.75 / after_2));
}

TEST(Multinomial, SameSeedSameDrawsAndChecks) {
  const Tensor w = Tensor::from_vector<double>({1, 2, 3}, {3});
  Generator a(2), b(2);
  EXPECT_EQ(lv(multinomial(w, 50, true, &a)), lv(multinomial(w, 50, true, &b)));
  EXPECT_EQ(lv(multinomial(w, 3, false, &a)), lv(multinomial(w, 3, false, &b)));
  EXPECT_EQ(multinomial(w, 5, true).dtype(), Dtype::Int64);
  expect_error<ValueError>([&] { multinomial(w, 4); }, {"multinomial", "4 samples", "3 non-zero"});
  expect_error<ValueError>([] { multinomial(Tensor::from_vector<double>({0.5, -0.1}, {2}), 1); },
                           {"multinomial", "non-negative", "-0.1"});
  expect_error<ValueError>([] { multinomial(zeros({2, 3}, Dtype::Float64), 1, true); }, {"multinomial", "zero"});
  expect_error<ValueError>([&] { multinomial(w, 0); }, {"multinomial", "num_samples", "0"});
  expect_error<ShapeError>([] { multinomial(zeros({1, 2, 3}), 1); }, {"multinomial", "(1, 2, 3)"});
}

TEST(Randperm, IsAPermutationAndUniform) {
  Generator gen(21);
  const int64_t trials = 6000;
  std::vector<double> first(4, 0.0);
  for (int64_t t = 0; t < trials; ++t) {
    auto p = lv(randperm(4, Dtype::Int64, {}, &gen));
    first[p[0]] += 1.0 / trials;
    std::sort(p.begin(), p.end());
    ASSERT_EQ(p, (std::vector<int64_t>{0, 1, 2, 3}));
  }
  for (const double f : first) EXPECT_NEAR(f, 0.25, 6 * std::sqrt(0.25 * 0.75 / trials));
  Generator a(5), b(5);
  EXPECT_EQ(lv(randperm(100, Dtype::Int64, {}, &a)), lv(randperm(100, Dtype::Int64, {}, &b)));
  EXPECT_EQ(randperm(0).numel(), 0);
  EXPECT_EQ(randperm(3, Dtype::Int32).dtype(), Dtype::Int32);
  expect_error<ValueError>([] { randperm(-1); }, {"randperm", "-1"});
}
