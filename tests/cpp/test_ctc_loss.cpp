// ctc_loss: the loss against a brute-force sum over every alignment of a short sequence, and its
// gradient through log_softmax against finite differences in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gradcheck.h"
#include "spiraltorch/nn/ctc_loss.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

// The labels an alignment collapses to: repeats merged, then blanks (0) dropped.
std::vector<int64_t> collapse(const std::vector<int64_t>& path) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != 0 && (i == 0 || path[i] != path[i - 1])) out.push_back(path[i]);
  }
  return out;
}

}  // namespace

TEST(CtcLoss, EqualsTheSumOverAllAlignments) {
  manual_seed(10);
  const int64_t T = 5, C = 3;
  const Tensor lp = log_softmax(randn({T, 1, C}, Dtype::Float64), -1);
  const auto v = lp.to_vector<double>();
  const std::vector<int64_t> target{1, 2, 2};
  double p = 0.0;
  std::vector<int64_t> path(T, 0);
  for (int64_t code = 0; code < static_cast<int64_t>(std::pow(C, T)); ++code) {
    int64_t rest = code;
    double logp = 0.0;
    for (int64_t t = 0; t < T; ++t) {
      path[t] = rest % C;
      rest /= C;
      logp += v[t * C + path[t]];
    }
    if (collapse(path) == target) p += std::exp(logp);
  }
  const Tensor tg = Tensor::from_vector(target, {1, 3});
  const double loss = nn::ctc_loss(lp, tg, {T}, {3}, 0, nn::Reduction::Sum).item();
  EXPECT_NEAR(loss, -std::log(p), 1e-12);
}

TEST(CtcLoss, GradientThroughLogSoftmaxMatchesFiniteDifferences) {
  manual_seed(11);
  const Tensor logits = randn({6, 2, 4}, Dtype::Float64);
  const Tensor tg = Tensor::from_vector(std::vector<int64_t>{1, 3, 2, 2}, {2, 2});
  test_util::gradcheck_all([&] {
    return nn::ctc_loss(log_softmax(logits, -1), tg, {6, 5}, {2, 2}, 0, nn::Reduction::None);
  }, {logits}, 1e-6);
  EXPECT_THROW(nn::ctc_loss(log_softmax(logits, -1), tg, {6, 7}, {2, 2}), ValueError);
}
