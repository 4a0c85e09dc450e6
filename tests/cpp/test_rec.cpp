#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "spiraltorch/error.h"
#include "spiraltorch/rec/matrix_factorization.h"

namespace {

// A rank-2 rating matrix with biases, observed on ~60% of cells.
struct Data {
  std::vector<int64_t> u, i;
  std::vector<float> v;
  st::rec::Ratings view() const { return {u, i, v}; }
};

Data low_rank(int64_t users, int64_t items, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::uniform_real_distribution<float> unif(0.0f, 1.0f);
  std::vector<float> a(users * 2), b(items * 2), bu(users), bi(items);
  for (auto& x : a) x = n(g);
  for (auto& x : b) x = n(g);
  for (auto& x : bu) x = 0.5f * n(g);
  for (auto& x : bi) x = 0.5f * n(g);
  Data d;
  for (int64_t u = 0; u < users; ++u)
    for (int64_t i = 0; i < items; ++i)
      if (unif(g) < 0.6f) {
        d.u.push_back(u);
        d.i.push_back(i);
        d.v.push_back(3.0f + bu[u] + bi[i] + a[u * 2] * b[i * 2] + a[u * 2 + 1] * b[i * 2 + 1]);
      }
  return d;
}

TEST(RecBiasedMF, SgdStepIsTheSurpriseUpdate) {
  st::rec::BiasedMF m(2, 2, 3, 1, 0.1f);
  m.set_global_mean(3.0f);
  const auto p0 = m.user_factors(), q0 = m.item_factors();
  const std::vector<int64_t> u{1}, i{0};
  const std::vector<float> v{4.0f};
  const float pred = m.predict(1, 0);
  m.sgd_epoch({u, i, v}, 0.1f, 0.02f, 0.05f);
  const float e = 4.0f - pred;
  EXPECT_NEAR(m.user_bias()[1], 0.1f * e, 1e-6);
  EXPECT_NEAR(m.item_bias()[0], 0.1f * e, 1e-6);
  for (int f = 0; f < 3; ++f) {
    const float puf = p0[3 + f], qif = q0[f];
    EXPECT_NEAR(m.user_factors()[3 + f], puf + 0.1f * (e * qif - 0.02f * puf), 1e-6);
    EXPECT_NEAR(m.item_factors()[f], qif + 0.1f * (e * puf - 0.02f * qif), 1e-6);
  }
  EXPECT_FLOAT_EQ(m.user_factors()[0], p0[0]);  // user 0 untouched
}

TEST(RecBiasedMF, SgdAndAlsRecoverALowRankMatrix) {
  const Data d = low_rank(40, 30, 3);
  st::rec::BiasedMF sgd(40, 30, 4, 5), als(40, 30, 4, 5);
  double first = 0, last = 0;
  for (int e = 0; e < 300; ++e) {
    last = sgd.sgd_epoch(d.view(), 0.02f, 0.001f, 0.001f).rmse;
    if (e == 0) first = last;
  }
  EXPECT_LT(last, 0.2 * first);
  EXPECT_LT(sgd.rmse(d.view()), 0.15);
  double prev = 1e9;
  for (int e = 0; e < 15; ++e) {
    const double r = als.als_sweep(d.view(), 1e-3f, 1e-3f).rmse;
    EXPECT_LE(r, prev + 1e-6);  // exact block minimisation never increases the objective (small reg)
    prev = r;
  }
  EXPECT_LT(prev, 0.05);
  EXPECT_NEAR(als.global_mean(), 3.0, 0.6);
}

TEST(RecBiasedMF, TopKRanksByPredictionAndExcludes) {
  const Data d = low_rank(10, 12, 4);
  st::rec::BiasedMF m(10, 12, 3, 2);
  for (int e = 0; e < 10; ++e) m.als_sweep(d.view(), 0.01f, 0.01f);
  const std::vector<int64_t> ex{0, 1};
  const auto top = m.top_k(2, 5, ex);
  ASSERT_EQ(top.size(), 5u);
  for (size_t k = 0; k < top.size(); ++k) {
    EXPECT_NE(top[k].first, 0);
    EXPECT_NE(top[k].first, 1);
    EXPECT_FLOAT_EQ(top[k].second, m.predict(2, top[k].first));
    if (k) EXPECT_GE(top[k - 1].second, top[k].second);
  }
  EXPECT_TRUE(m.top_k(2, 0).empty());
  EXPECT_EQ(m.top_k(2, 100).size(), 12u);
}

TEST(RecBiasedMF, BadInputIsNamedAndChangesNothing) {
  st::rec::BiasedMF m(3, 3, 2, 0);
  const auto before = m.user_factors();
  const std::vector<int64_t> u{0, 5}, i{0, 1};
  const std::vector<float> v{1, 2};
  try {
    m.sgd_epoch({u, i, v}, 0.1f, 0.0f, 0.0f);
    FAIL();
  } catch (const st::IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("user 5"), std::string::npos);
  }
  const std::vector<int64_t> u2{0, 1};
  EXPECT_THROW(m.als_sweep({u2, i, v}, -1.0f, 0.0f), st::ValueError);
  EXPECT_THROW(m.sgd_epoch({u2, i, std::vector<float>{1}}, 0.1f, 0, 0), st::ShapeError);
  EXPECT_EQ(m.user_factors(), before);
  EXPECT_THROW(st::rec::BiasedMF(0, 3, 2), st::ValueError);
}

TEST(RecImplicitALS, RanksHeldOutInteractionsAboveRandom) {
  // Two communities: users 0-19 use items 0-14, users 20-39 items 15-29. Hold one item per user out.
  std::vector<int64_t> u, i, held;
  std::vector<float> v;
  for (int64_t user = 0; user < 40; ++user) {
    const int64_t base = user < 20 ? 0 : 15;
    const int64_t out = base + user % 15;
    held.push_back(out);
    for (int64_t item = base; item < base + 15; ++item) {
      if (item == out || (item + user) % 3 == 0) continue;
      u.push_back(user);
      i.push_back(item);
      v.push_back(1.0f);
    }
  }
  st::rec::ImplicitALS m(40, 30, 4, 0.1f, 10.0f, 1);
  double prev = 1e18;
  for (int s = 0; s < 8; ++s) {
    const double loss = m.sweep({u, i, v});
    EXPECT_LE(loss, prev * (1 + 1e-6));
    prev = loss;
  }
  int hits = 0;
  for (int64_t user = 0; user < 40; ++user) {
    std::vector<int64_t> seen;
    for (size_t k = 0; k < u.size(); ++k)
      if (u[k] == user) seen.push_back(i[k]);
    for (const auto& [item, s] : m.top_k(user, 5, seen)) hits += item == held[user];
  }
  EXPECT_GT(hits, 30);  // random ranking would find about 40 * 5 / 20 = 10
  EXPECT_THROW(m.sweep({u, i, std::vector<float>(v.size(), -1.0f)}), st::ValueError);
}

}  // namespace
