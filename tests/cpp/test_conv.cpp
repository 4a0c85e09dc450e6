// conv2d from several threads at once: the float32 path (oneDNN when built) shares one
// primitive cache, so concurrent calls with the same and different shapes must give the
// same results as sequential ones. Also float32 against a float64 reference, and the LRU
// cache that holds the primitives.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/conv_onednn.h"
#include "backend/cpu/lru_cache.h"
#include "spiraltorch/nn/conv.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

struct Case {
  Shape x, w;
  nn::Pair stride, padding;
  int64_t groups;
};

const std::vector<Case> kCases = {
    {{4, 3, 16, 16}, {8, 3, 3, 3}, {1, 1}, {1, 1}, 1},
    {{2, 8, 12, 12}, {8, 4, 3, 3}, {2, 2}, {1, 1}, 2},
    {{3, 6, 9, 9}, {6, 1, 3, 3}, {1, 1}, {1, 1}, 6},
    {{2, 16, 8, 8}, {32, 16, 1, 1}, {1, 1}, {0, 0}, 1},
};

Tensor conv(const Case& c, const Tensor& x, const Tensor& w) {
  return nn::conv2d(x, w, {}, c.stride, c.padding, {1, 1}, c.groups);
}

}  // namespace

TEST(Conv2d, Float32MatchesFloat64Reference) {
  for (const Case& c : kCases) {
    manual_seed(11);
    const Tensor x = randn(c.x), w = randn(c.w);
    const auto got = conv(c, x, w).to_vector<float>();
    const auto want = conv(c, x.to(Dtype::Float64), w.to(Dtype::Float64)).to_vector<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << i;
  }
}

TEST(Conv2d, ConcurrentCallsMatchSequential) {
  // Inputs are drawn up front: the generator is global state shared by all threads.
  std::vector<Tensor> xs, ws;
  std::vector<std::vector<float>> want;
  manual_seed(5);
  for (const Case& c : kCases) {
    xs.push_back(randn(c.x));
    ws.push_back(randn(c.w));
    want.push_back(conv(c, xs.back(), ws.back()).to_vector<float>());
  }
  constexpr int kThreads = 4, kRounds = 6;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const size_t i = static_cast<size_t>(t + r) % kCases.size();
        if (conv(kCases[i], xs[i], ws[i]).to_vector<float>() != want[i]) ++mismatches[t];
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// The primitive cache of the oneDNN convolutions (src/backend/cpu/lru_cache.h).
TEST(LruCache, EvictsLeastRecentlyUsedAndCachesNull) {
  backend::LruCache<int, int> cache(2);
  int builds = 0;
  auto get = [&](int k) {
    return cache.get(k, [&] {
      ++builds;
      return k < 0 ? nullptr : std::make_shared<const int>(k * 10);
    });
  };
  EXPECT_EQ(*get(1), 10);
  EXPECT_EQ(*get(2), 20);
  EXPECT_EQ(*get(1), 10);  // hit: 1 is now the most recent
  EXPECT_EQ(builds, 2);
  const auto kept = get(2);
  EXPECT_EQ(*get(3), 30);  // evicts 1, the least recently used
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(*get(2), 20);
  EXPECT_EQ(builds, 3);
  EXPECT_EQ(*get(1), 10);  // rebuilt
  EXPECT_EQ(builds, 4);
  EXPECT_EQ(*kept, 20);  // an evicted value stays alive while held
  EXPECT_EQ(get(-1), nullptr);
  EXPECT_EQ(get(-1), nullptr);  // "cannot be built" is cached too
  EXPECT_EQ(builds, 5);
}

TEST(LruCache, ConcurrentMissesShareOneValue) {
  backend::LruCache<int, int> cache(8);
  std::vector<std::shared_ptr<const int>> got(8);
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t) {
    pool.emplace_back([&, t] { got[t] = cache.get(7, [t] { return std::make_shared<const int>(t); }); });
  }
  for (auto& th : pool) th.join();
  for (const auto& p : got) EXPECT_EQ(p, cache.get(7, [] { return std::make_shared<const int>(-1); }));
}

// The library loaded at run time is the oneDNN the headers promised: same major version
// (2.x and 3.x differ in ABI), no older minor; absent together with a reason.
TEST(OneDNN, RuntimeMatchesHeaders) {
  const std::optional<std::string> built = backend::onednn::header_version();
  const std::optional<std::string> running = backend::onednn::version();
  ASSERT_EQ(built.has_value(), running.has_value());
  if (!built) {
    EXPECT_FALSE(backend::onednn::unavailable_reason().empty());
    return;
  }
  int hmaj = 0, hmin = 0, rmaj = 0, rmin = 0;
  ASSERT_EQ(std::sscanf(built->c_str(), "%d.%d", &hmaj, &hmin), 2) << *built;
  ASSERT_EQ(std::sscanf(running->c_str(), "%d.%d", &rmaj, &rmin), 2) << *running;
  EXPECT_EQ(rmaj, hmaj) << *built << " vs " << *running;
  EXPECT_GE(rmin, hmin) << *built << " vs " << *running;
}
