// embedding_bag: each mode against a plain loop over the bags, gradients against finite
// differences in float64, and the refusals of bad offsets.
#include <gtest/gtest.h>

#include <vector>

#include "gradcheck.h"
#include "spiraltorch/nn/embedding_bag.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(EmbeddingBag, ModesMatchALoopOverBags) {
  manual_seed(5);
  const Tensor w = randn({6, 3}, Dtype::Float64);
  const std::vector<int64_t> idx{1, 2, 4, 4, 0, 5};
  const std::vector<int64_t> offs{0, 3, 3};  // bags {1, 2, 4}, {}, {4, 0, 5}
  const Tensor in = Tensor::from_vector(idx, {6}), off = Tensor::from_vector(offs, {3});
  const auto wv = w.to_vector<double>();
  const std::vector<std::vector<int64_t>> bags{{1, 2, 4}, {}, {4, 0, 5}};
  for (const std::string mode : {"sum", "mean", "max"}) {
    const auto out = nn::embedding_bag(w, in, off, mode).to_vector<double>();
    ASSERT_EQ(out.size(), 9u);
    for (size_t b = 0; b < 3; ++b) {
      for (int64_t d = 0; d < 3; ++d) {
        double want = 0;
        for (size_t i = 0; i < bags[b].size(); ++i) {
          const double v = wv[static_cast<size_t>(bags[b][i] * 3 + d)];
          want = mode == "max" ? (i == 0 ? v : std::max(want, v)) : want + v;
        }
        if (mode == "mean" && !bags[b].empty()) want /= static_cast<double>(bags[b].size());
        EXPECT_NEAR(out[b * 3 + static_cast<size_t>(d)], want, 1e-12) << mode << " bag " << b;
      }
    }
  }
}

TEST(EmbeddingBag, GradientsMatchFiniteDifferences) {
  manual_seed(6);
  const Tensor w = randn({5, 2}, Dtype::Float64);
  const Tensor in = Tensor::from_vector(std::vector<int64_t>{0, 3, 3, 1, 4, 2}, {2, 3});
  const Tensor psw = randn({2, 3}, Dtype::Float64);
  test_util::gradcheck_all([&] { return nn::embedding_bag(w, in, {}, "sum", psw); }, {w, psw});
  const Tensor w2 = randn({5, 2}, Dtype::Float64);  // a fresh leaf: w holds the first check's gradient
  test_util::gradcheck_all([&] { return nn::embedding_bag(w2, in, {}, "mean"); }, {w2});
}

TEST(EmbeddingBag, BadOffsetsAreRefused) {
  const Tensor w = randn({4, 2});
  const Tensor in = Tensor::from_vector(std::vector<int64_t>{0, 1, 2}, {3});
  EXPECT_THROW(nn::embedding_bag(w, in, Tensor::from_vector(std::vector<int64_t>{1}, {1})), ValueError);
  EXPECT_THROW(nn::embedding_bag(w, in, Tensor::from_vector(std::vector<int64_t>{0, 4}, {2})), ValueError);
  EXPECT_THROW(nn::embedding_bag(w, in, {}), ValueError);
  EXPECT_THROW(nn::embedding_bag(w, in, Tensor::from_vector(std::vector<int64_t>{0}, {1}), "median"), ValueError);
}
