#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "spiraltorch/error.h"
#include "spiraltorch/rl/replay_buffer.h"
#include "spiraltorch/rl/returns.h"

namespace {

TEST(RlReturns, DiscountedReturnsStopAtEpisodeEnds) {
  // Two envs, three steps, time-major: env 0 ends at t = 1, env 1 runs on into the bootstrap.
  const std::vector<float> rewards{1, 2, 1, 2, 1, 2};
  const std::vector<float> dones{0, 0, 1, 0, 0, 0};
  const std::vector<float> boot{5, 10};
  const float g = 0.5f;
  const auto out = st::rl::discounted_returns(rewards, dones, boot, 2, g);
  // env 0: t2 = 1 + .5 * 5 = 3.5; t1 = 1 (done); t0 = 1 + .5 * 1 = 1.5
  // env 1: t2 = 2 + .5 * 10 = 7; t1 = 2 + 3.5 = 5.5; t0 = 2 + 2.75 = 4.75
  const std::vector<float> want{1.5f, 4.75f, 1.0f, 5.5f, 3.5f, 7.0f};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_FLOAT_EQ(out[k], want[k]) << k;
}

TEST(RlReturns, GaeMatchesTheDefinitionAndTdLambdaLimits) {
  const std::vector<float> r{1.0f, 0.5f, -1.0f, 2.0f};
  const std::vector<float> v{0.2f, 0.4f, -0.3f, 0.8f};
  const std::vector<float> nv{0.4f, -0.3f, 0.8f, 0.6f};  // v shifted; last = V(s_4)
  const std::vector<float> term{0, 0, 0, 0}, end{0, 0, 0, 0};
  const float gamma = 0.9f, lam = 0.8f;
  const auto a = st::rl::generalized_advantage_estimation(r, v, nv, term, end, 1, gamma, lam);
  double next = 0.0;
  for (int t = 3; t >= 0; --t) {
    const double delta = r[t] + gamma * nv[t] - v[t];
    next = delta + gamma * lam * next;
    EXPECT_NEAR(a.advantages[t], next, 1e-6);
    EXPECT_NEAR(a.returns[t], next + v[t], 1e-6);
  }
  // lambda = 1: returns are the discounted returns bootstrapped with V(s_4).
  const auto one = st::rl::generalized_advantage_estimation(r, v, nv, term, end, 1, gamma, 1.0f);
  const std::vector<float> boot{0.6f}, none{0, 0, 0, 0};
  const auto g = st::rl::discounted_returns(r, none, boot, 1, gamma);
  for (int t = 0; t < 4; ++t) EXPECT_NEAR(one.returns[t], g[t], 1e-5);
}

TEST(RlReturns, GaeTruncationBootstrapsTerminationDoesNot) {
  const std::vector<float> r{1, 1}, v{0, 0}, nv{3, 7}, end{1, 1};
  const auto trunc = st::rl::generalized_advantage_estimation(r, v, nv, std::vector<float>{0, 0}, end, 1, 1.0f, 1.0f);
  const auto term = st::rl::generalized_advantage_estimation(r, v, nv, std::vector<float>{1, 1}, end, 1, 1.0f, 1.0f);
  EXPECT_FLOAT_EQ(trunc.advantages[0], 4.0f);  // no flow from step 1 into step 0 across the boundary
  EXPECT_FLOAT_EQ(trunc.advantages[1], 8.0f);
  EXPECT_FLOAT_EQ(term.advantages[0], 1.0f);
  EXPECT_FLOAT_EQ(term.advantages[1], 1.0f);
}

TEST(RlReturns, BadShapesAndRatesAreNamed) {
  const std::vector<float> r{1, 2, 3}, d{0, 0};
  EXPECT_THROW(st::rl::discounted_returns(r, d, std::vector<float>{0}, 1, 0.9f), st::ShapeError);
  EXPECT_THROW(st::rl::discounted_returns(r, r, std::vector<float>{0}, 2, 0.9f), st::ShapeError);
  EXPECT_THROW(st::rl::discounted_returns(r, r, std::vector<float>{0}, 1, 1.5f), st::ValueError);
  try {
    st::rl::generalized_advantage_estimation(r, r, r, r, r, 1, 0.9f, -0.1f);
    FAIL();
  } catch (const st::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("lambda"), std::string::npos);
  }
}

TEST(RlReplay, RingOverwritesOldestAndSamplesDeterministically) {
  st::rl::ReplayBuffer buf(4, 2, 7);
  for (int k = 0; k < 6; ++k) {
    const std::vector<float> o{float(k), float(k)}, n{float(k + 1), float(k + 1)};
    const std::vector<int64_t> a{k % 2};
    buf.push(o, a, std::vector<float>{float(k)}, n, std::vector<float>{k == 5 ? 1.0f : 0.0f});
  }
  EXPECT_EQ(buf.size(), 4);
  const auto s = buf.sample(64);
  std::set<float> seen;
  for (int64_t b = 0; b < 64; ++b) {
    const float k = s.rewards[b];
    seen.insert(k);
    EXPECT_GE(k, 2.0f);  // transitions 0 and 1 were overwritten
    EXPECT_FLOAT_EQ(s.obs[b * 2], k);
    EXPECT_FLOAT_EQ(s.next_obs[b * 2 + 1], k + 1);
    EXPECT_EQ(s.actions[b], static_cast<int64_t>(k) % 2);
    EXPECT_FLOAT_EQ(s.terminated[b], k == 5 ? 1.0f : 0.0f);
  }
  EXPECT_EQ(seen.size(), 4u);
  st::rl::ReplayBuffer twin(4, 2, 7);
  for (int k = 0; k < 6; ++k) {
    const std::vector<float> o{float(k), float(k)}, n{float(k + 1), float(k + 1)};
    twin.push(o, std::vector<int64_t>{k % 2}, std::vector<float>{float(k)}, n, std::vector<float>{0});
  }
  EXPECT_EQ(twin.sample(64).indices, s.indices);
}

TEST(RlReplay, BadPushChangesNothing) {
  st::rl::ReplayBuffer buf(8, 3, 0);
  EXPECT_THROW(buf.sample(2), st::ValueError);
  const std::vector<float> o{1, 2, 3, 4, 5, 6};
  EXPECT_THROW(buf.push(o, std::vector<int64_t>{0, 1}, std::vector<float>{1, 1}, std::vector<float>{1, 2, 3},
                        std::vector<float>{0, 0}),
               st::ShapeError);
  EXPECT_THROW(buf.push(o, std::vector<int64_t>{0, -1}, std::vector<float>{1, 1}, o, std::vector<float>{0, 0}),
               st::ValueError);
  EXPECT_EQ(buf.size(), 0);
  EXPECT_THROW(st::rl::ReplayBuffer(0, 3), st::ValueError);
}

}  // namespace
