// torch.nn's remaining losses (src/nn/loss_{classification,regression,likelihood,metric}.cpp): float64
// finite-difference gradient checks, hand-computed values and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "spiraltorch/nn/loss_torch_family.h"
#include "spiraltorch/spiraltorch.h"
#include "gradcheck.h"

using namespace st;
using st::test_util::gradcheck;
using st::test_util::gradcheck_all;
using namespace st::nn;

namespace {

Tensor from(const std::vector<double>& v, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  Tensor t = zeros(shape, Dtype::Float64);
  for (size_t i = 0; i < v.size(); ++i) t.data<double>()[i] = v[i];
  return t;
}

}  // namespace

TEST(LossesTorchFamily, GradientsMatchFiniteDifferences) {
  manual_seed(1);
  const Tensor p = from({0.2, 0.7, 0.4, 0.9, 0.35, 0.6}, {2, 3});
  const Tensor t = from({0.0, 1.0, 0.3, 1.0, 0.5, 0.0}, {2, 3});
  gradcheck([&](const Tensor& x) { return binary_cross_entropy(x, t, {}, Reduction::None); }, p);
  gradcheck([&](const Tensor& y) { return binary_cross_entropy(p, y, {}, Reduction::Sum); }, t);
  const Tensor logp = log(p);
  gradcheck([&](const Tensor& x) { return kl_div(x, p, "batchmean"); }, logp);
  gradcheck([&](const Tensor& y) { return kl_div(logp, y, "none"); }, p);
  gradcheck([&](const Tensor& y) { return kl_div(logp, y, "sum", true); }, logp);
  const Tensor a = randn({2, 3}, Dtype::Float64), b = randn({2, 3}, Dtype::Float64);
  gradcheck([&](const Tensor& x) { return smooth_l1_loss(x, b, Reduction::None, 0.7); }, a);
  gradcheck([&](const Tensor& x) { return soft_margin_loss(x, from({1, -1, 1, -1, -1, 1}, {2, 3}), Reduction::None); },
            a);
  const Tensor y4 = from({1, -1, -1, 1});
  gradcheck([&](const Tensor& x) {
    return margin_ranking_loss(x, from({0.1, 0.2, -0.3, 0.4}), y4, 0.5, Reduction::None);
  }, from({0.3, -0.4, 0.9, -1.2}));
  gradcheck([&](const Tensor& x) { return cosine_embedding_loss(x, b, from({1, -1}), 0.1, Reduction::None); }, a);
  gradcheck([&](const Tensor& x) { return poisson_nll_loss(x, from({0, 1, 2, 3, 4, 5}, {2, 3}), true, true); }, a);
  const Tensor var = from({0.5, 1.5});
  gradcheck([&](const Tensor& v) { return gaussian_nll_loss(a, b, v, true, 1e-6, Reduction::None); }, var);
  gradcheck([&](const Tensor& x) { return gaussian_nll_loss(x, b, var, false, 1e-6, Reduction::None); }, a);
  gradcheck([&](const Tensor& x) {
    return multilabel_soft_margin_loss(x, from({1, 0, 1, 0, 0, 1}, {2, 3}), from({1, 2, 0.5}));
  }, a);
  const Tensor cls = from({2, 0}).to(Dtype::Int64);
  gradcheck([&](const Tensor& x) { return multi_margin_loss(x, cls, 1, 1.0, {}, Reduction::None); }, a);
  gradcheck([&](const Tensor& x) { return multi_margin_loss(x, cls, 2, 0.8, from({1, 2, 3})); }, a);
}

TEST(LossesTorchFamily, ValuesByHand) {
  // BCE with log clamped at -100: x = 0, t = 1 gives 100.
  EXPECT_DOUBLE_EQ(binary_cross_entropy(from({0.0}), from({1.0}), {}, Reduction::Sum).item(), 100.0);
  EXPECT_NEAR(binary_cross_entropy(from({0.25}), from({1.0})).item(), -std::log(0.25), 1e-15);
  // smooth L1 with beta 2: |d| = 1 -> 0.5 / 2; |d| = 3 -> 3 - 1.
  EXPECT_NEAR(smooth_l1_loss(from({1.0, 3.0}), from({0.0, 0.0}), Reduction::Sum, 2.0).item(), 0.25 + 2.0, 1e-15);
  // KL of identical distributions is 0; batchmean divides the sum by dim 0.
  const Tensor q = from({0.25, 0.75, 0.5, 0.5}, {2, 2});
  EXPECT_NEAR(kl_div(log(q), q, "batchmean").item(), 0.0, 1e-15);
  EXPECT_NEAR(kl_div(from({0.0, 0.0}, {1, 2}), from({0.5, 0.5}, {1, 2}), "batchmean").item(), std::log(0.5), 1e-15);
  // hinge: y = 1 -> x; y = -1 -> max(0, margin - x).
  EXPECT_NEAR(hinge_embedding_loss(from({0.3, 0.4}), from({1, -1}), 1.0, Reduction::Sum).item(), 0.3 + 0.6, 1e-15);
  // multi-margin: x = (0.1, 0.2, 0.4), y = 2 -> (0.7 + 0.8) / 3.
  EXPECT_NEAR(multi_margin_loss(from({0.1, 0.2, 0.4}), reshape(from({2}), {}).to(Dtype::Int64)).item(), 0.5, 1e-15);
  // modules call the functional forms
  EXPECT_NEAR(SmoothL1Loss(Reduction::Sum, 2.0)(from({1.0, 3.0}), from({0.0, 0.0})).item(), 2.25, 1e-15);
  EXPECT_NEAR(MarginRankingLoss(0.5).forward(from({1.0}), from({0.0}), from({-1.0})).item(), 1.5, 1e-15);
  EXPECT_NEAR(GaussianNLLLoss().forward(from({1.0}), from({1.0}), from({1.0})).item(), 0.0, 1e-15);
}

TEST(LossesTorchFamily, ErrorsNameTheOperation) {
  const Tensor a = zeros({2, 3}, Dtype::Float64), b = zeros({3, 2}, Dtype::Float64);
  EXPECT_THROW(binary_cross_entropy(a, b), ShapeError);
  EXPECT_THROW(binary_cross_entropy(from({1.5}), from({1.0})), ValueError);
  EXPECT_THROW(kl_div(a, a, "avg"), ValueError);
  EXPECT_THROW(KLDivLoss("avg"), ValueError);
  EXPECT_THROW(smooth_l1_loss(a, a, Reduction::Mean, -1.0), ValueError);
  EXPECT_THROW(gaussian_nll_loss(a, a, zeros({3, 2}, Dtype::Float64)), ShapeError);
  EXPECT_THROW(gaussian_nll_loss(a, a, -1.0), ValueError);
  EXPECT_THROW(multi_margin_loss(a, from({0, 3}).to(Dtype::Int64)), IndexError);
  EXPECT_THROW(MultiMarginLoss(3), ValueError);
  EXPECT_THROW(MarginRankingLoss().forward(a, a), DtypeError);
  try {
    smooth_l1_loss(a, b);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("smooth_l1_loss: input shape (2, 3) and target shape (3, 2) differ"),
              std::string::npos)
        << e.what();
  }
}
