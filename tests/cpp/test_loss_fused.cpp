// The losses' one pattern for fused kernels (src/nn/loss_fused.h): the composite defines each loss,
// the CPU's fused kernels (Backend::pointwise_loss, Backend::cross_entropy_rows) must give the
// same values and gradients, and both match float64 finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "gradcheck.h"
#include "nn/loss_fused.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using st::nn::Reduction;
using st::nn::loss_detail::FusedLossesOff;

namespace {

struct Case {
  std::string name;
  // loss(pred, target), reduced to a scalar by the caller's weights
  std::function<Tensor(const Tensor&, const Tensor&)> f;
  bool probability_target;  // targets in [0, 1] (else any real)
};

std::vector<Case> cases() {
  const Tensor pos_weight = full({5}, 1.7, Dtype::Float64);
  return {
      {"mse", [](const Tensor& p, const Tensor& t) { return nn::mse_loss(p, t, Reduction::None); }, false},
      {"l1", [](const Tensor& p, const Tensor& t) { return nn::l1_loss(p, t, Reduction::None); }, false},
      {"huber", [](const Tensor& p, const Tensor& t) { return nn::huber_loss(p, t, Reduction::None, 0.7); }, false},
      {"bce_with_logits",
       [](const Tensor& p, const Tensor& t) {
    return nn::binary_cross_entropy_with_logits(p, t, {}, {}, Reduction::None);
  }, true},
      {"bce_with_logits_pos_weight",
       [pos_weight](const Tensor& p, const Tensor& t) {
    return nn::binary_cross_entropy_with_logits(p, t, {}, pos_weight, Reduction::None);
  }, true},
      {"hyperbolic_ce",
       [](const Tensor& p, const Tensor& t) { return nn::hyperbolic_cross_entropy(p, t, -0.8, Reduction::None, 0.1); },
       true},
  };
}

// Values and both gradients of sum(f(pred, target) * w) in float64.
std::vector<std::vector<double>> run(const Case& c, const Tensor& p0, const Tensor& t0, const Tensor& w) {
  Tensor p = p0.detach().clone(), t = t0.detach().clone();
  p.set_requires_grad(true);
  t.set_requires_grad(true);
  const Tensor l = c.f(p, t);
  sum(mul(l, w)).backward();
  return {l.detach().to_vector<double>(), p.grad().to_vector<double>(), t.grad().to_vector<double>()};
}

}  // namespace

TEST(LossFused, PointwiseKernelsEqualTheirComposites) {
  manual_seed(3);
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Tensor p = randn({4, 5}, Dtype::Float64);
    const Tensor t = c.probability_target ? rand({4, 5}, Dtype::Float64) : randn({4, 5}, Dtype::Float64);
    const Tensor w = randn({4, 5}, Dtype::Float64);
    const auto fused = run(c, p, t, w);
    std::vector<std::vector<double>> composite;
    {
      FusedLossesOff off;
      composite = run(c, p, t, w);
    }
    for (size_t k = 0; k < fused.size(); ++k) {
      ASSERT_EQ(fused[k].size(), composite[k].size());
      for (size_t i = 0; i < fused[k].size(); ++i) {
        EXPECT_NEAR(fused[k][i], composite[k][i], 1e-12) << "output " << k << " element " << i;
      }
    }
  }
}

TEST(LossFused, BothPathsMatchFiniteDifferences) {
  manual_seed(5);
  for (const bool fused : {true, false}) {
    for (const Case& c : cases()) {
      SCOPED_TRACE(c.name + (fused ? " fused" : " composite"));
      // Away from the kinks of l1/huber (|p - t| = 0 or delta) and the clamp's edges.
      const Tensor p = randn({3, 5}, Dtype::Float64);
      const Tensor t = c.probability_target ? add(mul(rand({3, 5}, Dtype::Float64), 0.6), 0.2)
                                            : add(p, add(mul(rand({3, 5}, Dtype::Float64), 0.4), 0.05));
      std::optional<FusedLossesOff> off;
      if (!fused) off.emplace();
      test_util::gradcheck_all([&] { return c.f(p, t); }, {p, t}, 1e-6);
    }
  }
}

TEST(LossFused, CrossEntropyRowsEqualTheComposite) {
  manual_seed(7);
  const Tensor x = randn({6, 9}, Dtype::Float64);
  const Tensor y = Tensor::from_vector(std::vector<int64_t>{0, 8, 3, 3, -100, 5}, {6});
  for (const Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    auto value_and_grad = [&](bool fused) {
      std::optional<FusedLossesOff> off;
      if (!fused) off.emplace();
      Tensor xl = x.detach().clone();
      xl.set_requires_grad(true);
      const Tensor l = nn::cross_entropy(xl, y, {}, -100, r, 0.0);
      sum(l).backward();
      return std::make_pair(l.detach().to_vector<double>(), xl.grad().to_vector<double>());
    };
    const auto [lf, gf] = value_and_grad(true);
    const auto [lc, gc] = value_and_grad(false);
    ASSERT_EQ(lf.size(), lc.size());
    for (size_t i = 0; i < lf.size(); ++i) EXPECT_NEAR(lf[i], lc[i], 1e-12);
    for (size_t i = 0; i < gf.size(); ++i) EXPECT_NEAR(gf[i], gc[i], 1e-12);
  }
  test_util::gradcheck([&](const Tensor& xl) { return nn::cross_entropy(xl, y, {}, -100, Reduction::Mean, 0.0); }, x);
}

TEST(LossFused, CpuHalfCrossEntropyRowsEqualTheFloat32RowsOfTheirCast) {
  // Half rows are widened to float32 a row at a time: loss and lse equal the float32 rows' of the
  // cast logits exactly, and the gradient is theirs rounded once to the half type. 1000 columns
  // cover the SIMD bodies and tails; ignored and out-of-range targets behave as in float32.
  manual_seed(11);
  auto& be = backend::backend_for(Device{});
  const Tensor t = Tensor::from_vector(std::vector<int64_t>{0, 999, 3, -100, 1000, 5, 17}, {7});
  const Tensor g = mul(rand({7}), 3.0);
  for (const Dtype half : {Dtype::BFloat16, Dtype::Float16}) {
    SCOPED_TRACE(dtype_name(half));
    const Tensor xh = mul(randn({7, 1000}), 4.0).to(half), xf = xh.to(Dtype::Float32);
    std::vector<std::vector<float>> got, want;
    for (const Tensor& x : {xh, xf}) {
      Tensor loss = Tensor::empty({7}, Dtype::Float32), lse = Tensor::empty({7}, Dtype::Float32);
      Tensor no_grad;
      ASSERT_TRUE(be.cross_entropy_rows(x, t, -100, 0.5, loss, lse, no_grad));
      Tensor dx = Tensor::empty(x.shape(), x.dtype());
      ASSERT_TRUE(be.cross_entropy_rows_backward(x, t, lse, g, -100, 0.5, dx));
      auto& out = x.dtype() == half ? got : want;
      out = {loss.to_vector<float>(), lse.to_vector<float>(), dx.to(half).to(Dtype::Float32).to_vector<float>()};
    }
    EXPECT_TRUE(std::isnan(got[0][4]));
    EXPECT_EQ(got[0][3], 0.0f);
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].size(), want[k].size());
      for (size_t i = 0; i < got[k].size(); ++i) {
        if (std::isnan(want[k][i])) {
          EXPECT_TRUE(std::isnan(got[k][i]));
        } else {
          EXPECT_EQ(got[k][i], want[k][i]) << "output " << k << " element " << i;
        }
      }
    }
  }
}

TEST(LossFused, CrossEntropyRowsWithTheirGradientEqualTheBackwardsPass) {
  // Asked for dx, the rows also write each row's own gradient (linear_cross_entropy's chunks):
  // the backward's with g = 1, element for element, in every dtype; ignored rows are 0 and an
  // out-of-range target's row is its softmax.
  manual_seed(12);
  auto& be = backend::backend_for(Device{});
  const Tensor t = Tensor::from_vector(std::vector<int64_t>{0, 299, 3, -100, 300, 5}, {6});
  for (const Dtype dt : {Dtype::Float64, Dtype::Float32, Dtype::BFloat16, Dtype::Float16}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = mul(randn({6, 300}), 3.0).to(dt);
    const Dtype stat = dt == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;
    Tensor loss = Tensor::empty({6}, stat), lse = Tensor::empty({6}, stat), dx = Tensor::empty(x.shape(), dt);
    ASSERT_TRUE(be.cross_entropy_rows(x, t, -100, 0.25, loss, lse, dx));
    Tensor loss2 = Tensor::empty({6}, stat), lse2 = Tensor::empty({6}, stat), none;
    ASSERT_TRUE(be.cross_entropy_rows(x, t, -100, 0.25, loss2, lse2, none));
    const Tensor one = full({1}, 1.0, stat);
    Tensor want = Tensor::empty(x.shape(), dt);
    ASSERT_TRUE(be.cross_entropy_rows_backward(x, t, lse2, one, -100, 0.25, want));
    const auto a = dx.to(Dtype::Float64).to_vector<double>(), b = want.to(Dtype::Float64).to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "element " << i;
    const auto l1 = loss.to(Dtype::Float64).to_vector<double>(), l2 = loss2.to(Dtype::Float64).to_vector<double>();
    for (size_t i = 0; i < l1.size(); ++i) {
      if (std::isnan(l2[i])) {
        EXPECT_TRUE(std::isnan(l1[i])) << "row " << i;
      } else {
        EXPECT_EQ(l1[i], l2[i]) << "row " << i;
      }
    }
    for (int64_t c = 0; c < 300; ++c) EXPECT_EQ(b[3 * 300 + c], 0.0);  // ignored
    double row4 = 0;                                                   // out of range: softmax, sums to 1/4
    for (int64_t c = 0; c < 300; ++c) row4 += b[4 * 300 + c];
    EXPECT_NEAR(row4, 0.25, dt == Dtype::Float64 || dt == Dtype::Float32 ? 1e-6 : 2e-2);
  }
}

TEST(LossFused, FloatThirtyTwoKernelsStayWithinRoundingOfTheComposite) {
  manual_seed(9);
  const Tensor p = randn({64, 5}), t = rand({64, 5});
  for (const Case& c : cases()) {
    if (c.name.find("pos_weight") != std::string::npos) continue;  // its float64 weight promotes the composite
    SCOPED_TRACE(c.name);
    const auto fused = c.f(p, t).to_vector<float>();
    std::vector<float> composite;
    {
      FusedLossesOff off;
      composite = c.f(p, t).to_vector<float>();
    }
    for (size_t i = 0; i < fused.size(); ++i) EXPECT_NEAR(fused[i], composite[i], 1e-5f * (1.0f + std::abs(fused[i])));
  }
}
