// torch.optim's schedule family and the Adamax/NAdam/RAdam/Adadelta/Rprop optimizers through the
// C++ API: closed-form rates, composite schedules, plateau reduction and hand-computed updates.
// (Python tests compare every one with torch side by side.)
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "spiraltorch/optim/adadelta.h"
#include "spiraltorch/optim/adagrad.h"
#include "spiraltorch/optim/adam.h"
#include "spiraltorch/optim/adamax.h"
#include "spiraltorch/optim/lr_schedulers.h"
#include "spiraltorch/optim/rmsprop.h"
#include "spiraltorch/optim/rprop.h"
#include "spiraltorch/optim/sgd.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using namespace st::optim;

namespace {

std::shared_ptr<Optimizer> sgd(double lr) {
  Tensor p = zeros({2}, Dtype::Float64);
  p.set_requires_grad(true);
  return std::make_shared<SGD>(std::vector<ParamGroup>{ParamGroup{{p}, {}}}, lr);
}

double lr_of(const std::shared_ptr<Optimizer>& o) { return o->param_groups()[0]->get("lr"); }

}  // namespace

TEST(LRSchedulers, ChainableRulesFollowTheirClosedForms) {
  auto o = sgd(1.0);
  MultiStepLR ms(o, {5, 2, 5}, 0.5);
  for (int e = 1; e <= 8; ++e) {
    ms.step();
    const double want = std::pow(0.5, (e >= 2) + 2 * (e >= 5));
    EXPECT_NEAR(lr_of(o), want, 1e-15) << "epoch " << e;
  }
  auto o2 = sgd(2.0);
  PolynomialLR poly(o2, 4, 2.0);
  for (int e = 1; e <= 6; ++e) {
    poly.step();
    EXPECT_NEAR(lr_of(o2), 2.0 * std::pow(1.0 - std::min(e, 4) / 4.0, 2.0), 1e-14) << "epoch " << e;
  }
  auto o3 = sgd(1.0);
  LinearLR lin(o3, 0.25, 0.75, 4);
  EXPECT_NEAR(lr_of(o3), 0.25, 1e-15);
  for (int e = 1; e <= 6; ++e) {
    lin.step();
    EXPECT_NEAR(lr_of(o3), 0.25 + 0.5 * std::min(e, 4) / 4.0, 1e-14) << "epoch " << e;
  }
}

TEST(LRSchedulers, WarmRestartsAndSequential) {
  auto o = sgd(1.0);
  CosineAnnealingWarmRestarts w(o, 2, 2, 0.0);
  const double want_tcur[] = {1, 0, 1, 2, 3, 0};
  const int64_t want_ti[] = {2, 4, 4, 4, 4, 8};
  for (int k = 0; k < 6; ++k) {
    w.step();
    EXPECT_EQ(w.T_cur(), want_tcur[k]);
    EXPECT_EQ(w.T_i(), want_ti[k]);
    EXPECT_NEAR(lr_of(o), (1 + std::cos(std::numbers::pi * want_tcur[k] / want_ti[k])) / 2, 1e-14);
  }
  auto o2 = sgd(1.0);
  auto a = std::make_shared<ConstantLR>(o2, 0.5, 10);
  auto b = std::make_shared<ExponentialLR>(o2, 0.5);
  SequentialLR seq(o2, {a, b}, {3});
  EXPECT_NEAR(lr_of(o2), 0.5, 1e-15);
  const double want[] = {0.5, 0.5, 1.0, 0.5, 0.25};  // at the milestone ExponentialLR restarts at base_lr
  for (double v : want) {
    seq.step();
    EXPECT_NEAR(lr_of(o2), v, 1e-15);
  }
  EXPECT_THROW(SequentialLR(o2, {a, b}, {}), ValueError);
}

TEST(LRSchedulers, PlateauReducesAfterPatienceAndRespectsMinLr) {
  auto o = sgd(1.0);
  ReduceLROnPlateau p(o, "min", 0.5, 1, 0.0, "abs", 1, {0.3});
  const double metrics[] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
  const double want[] = {1.0, 1.0, 0.5, 0.5, 0.5, 0.3, 0.3};
  for (int k = 0; k < 7; ++k) {
    p.step(metrics[k]);
    EXPECT_NEAR(lr_of(o), want[k], 1e-15) << "step " << k;
  }
  EXPECT_THROW(ReduceLROnPlateau(o, "min", 1.0), ValueError);
}

TEST(TorchFamilyOptimizers, AdadeltaAndAdamaxFirstStepsByHand) {
  Tensor p = Tensor::from_vector(std::vector<double>{1.0, -2.0}, {2});
  p.set_requires_grad(true);
  Adadelta ad({ParamGroup{{p}, {}}}, 1.0, 0.9, 1e-6);
  p.set_grad(Tensor::from_vector(std::vector<double>{0.5, -1.0}, {2}));
  ASSERT_TRUE(static_cast<bool>(ad.step()));
  for (int i = 0; i < 2; ++i) {
    const double g = i == 0 ? 0.5 : -1.0, sq = 0.1 * g * g;
    const double delta = std::sqrt(1e-6) / std::sqrt(sq + 1e-6) * g;
    EXPECT_NEAR(p.to_vector<double>()[i], (i == 0 ? 1.0 : -2.0) - delta, 1e-14);
  }
  Tensor q = Tensor::from_vector(std::vector<double>{1.0, -2.0}, {2});
  q.set_requires_grad(true);
  Adamax am({ParamGroup{{q}, {}}}, 0.1);
  q.set_grad(Tensor::from_vector(std::vector<double>{0.5, -1.0}, {2}));
  am.step();
  // First step: m = 0.1 g, u = |g| + eps, lr / (1 - 0.9) * m / u = lr * sign(g) (to eps).
  EXPECT_NEAR(q.to_vector<double>()[0], 0.9, 1e-7);
  EXPECT_NEAR(q.to_vector<double>()[1], -1.9, 1e-7);
}

TEST(TorchFamilyOptimizers, RpropGrowsShrinksAndSkipsOnSignFlip) {
  Tensor p = zeros({2}, Dtype::Float64);
  p.set_requires_grad(true);
  Rprop r({ParamGroup{{p}, {}}}, 0.1, 0.5, 2.0, 1e-3, 0.3);
  auto step = [&](double g0, double g1) {
    p.set_grad(Tensor::from_vector(std::vector<double>{g0, g1}, {2}));
    r.step();
    return p.to_vector<double>();
  };
  auto v = step(1.0, 1.0);  // first step: size lr
  EXPECT_NEAR(v[0], -0.1, 1e-15);
  v = step(1.0, -1.0);  // same sign: size 0.2; flipped: size 0.05 and no move
  EXPECT_NEAR(v[0], -0.3, 1e-15);
  EXPECT_NEAR(v[1], -0.1, 1e-15);
  v = step(1.0, -1.0);  // size clamps at 0.3; the skipped element restarts with prev = 0 (factor 1)
  EXPECT_NEAR(v[0], -0.6, 1e-15);
  EXPECT_NEAR(v[1], -0.05, 1e-15);
  EXPECT_THROW(Rprop({ParamGroup{{p}, {}}}, 0.1, 1.5, 2.0), ValueError);
}

// The base checks the options several optimizers share by name (eps, beta1/beta2, momentum,
// nesterov) for every optimizer that has them, with the optimizer's name in the message.
TEST(TorchFamilyOptimizers, SharedOptionChecksNameTheOptimizer) {
  Tensor p = zeros({2}, Dtype::Float64);
  p.set_requires_grad(true);
  const auto groups = [&] { return std::vector<ParamGroup>{ParamGroup{{p}, {}}}; };
  const auto message = [](auto make) -> std::string {
    try {
      make();
    } catch (const ValueError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message([&] { Adagrad(groups(), 0.01, 0.0, 0.0, 0.0, -1.0); }).find("Adagrad: invalid epsilon value -1"),
            std::string::npos);
  EXPECT_NE(message([&] { Adadelta(groups(), 1.0, 0.9, -1.0); }).find("Adadelta: invalid epsilon value -1"),
            std::string::npos);
  EXPECT_NE(message([&] { RMSprop(groups(), 0.01, 0.99, 1e-8, 0.0, -0.5); }).find("RMSprop: invalid momentum value"),
            std::string::npos);
  EXPECT_NE(message([&] { Adam(groups(), 1e-3, 0.9, 1.5); }).find("Adam: invalid beta2 1.5"), std::string::npos);
  EXPECT_NE(message([&] { SGD(groups(), 0.1, 0.0, 0.0, 0.0, true); }).find("SGD: Nesterov momentum requires"),
            std::string::npos);
  EXPECT_EQ(message([&] { SGD(groups(), 0.1, 0.9, 0.0, 0.0, true); }), "");
}
