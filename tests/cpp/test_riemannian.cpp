// Riemannian SGD/Adam and the ball maths behind them (gyration, parallel transport).
#include <gtest/gtest.h>

#include <cmath>

#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/zspace/riemannian.h"
#include "spiraltorch/optim/sgd.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
namespace g = st::geometry;

namespace {

Tensor pts(std::vector<double> v, int64_t rows) {
  const int64_t cols = static_cast<int64_t>(v.size()) / rows;
  return Tensor::from_vector(v, {rows, cols});
}

}  // namespace

TEST(Riemannian, GyrationMatchesItsMobiusDefinition) {
  const double c = -0.7;
  const Tensor a = pts({0.1, -0.3, 0.2, 0.05, 0.2, -0.1}, 2), b = pts({-0.2, 0.1, 0.3, 0.3, -0.1, 0.2}, 2);
  const Tensor w = pts({0.05, 0.1, -0.02, -0.1, 0.04, 0.03}, 2);
  const Tensor lhs = g::gyration(a, b, w, c);
  const Tensor rhs = g::mobius_add(neg(g::mobius_add(a, b, c)), g::mobius_add(a, g::mobius_add(b, w, c), c), c);
  EXPECT_TRUE(allclose(lhs, rhs, 1e-10, 1e-12));
}

TEST(Riemannian, TransportKeepsTheRiemannianNorm) {
  const double c = -1.3;
  const Tensor x = pts({0.2, -0.4, 0.1}, 1), y = pts({-0.3, 0.2, 0.5}, 1), v = pts({1.0, 2.0, -0.5}, 1);
  const Tensor t = g::parallel_transport(x, y, v, c);
  const double nx = (square(g::conformal_factor(x, c)) * sum(square(v))).item();
  const double ny = (square(g::conformal_factor(y, c)) * sum(square(t))).item();
  EXPECT_NEAR(nx, ny, 1e-10 * nx);
}

TEST(Riemannian, SgdStepFromTheOriginIsTheExpMapOfTheRiemannianGradient) {
  Tensor p = zeros({1, 2}, Dtype::Float64);
  p.set_requires_grad(true);
  p.set_manifold_curvature(-1.0);
  optim::RiemannianSGD opt({optim::ParamGroup{{p}, {}}}, 0.5);
  p.set_grad(Tensor::from_vector<double>({3.0, 4.0}, {1, 2}));
  ASSERT_TRUE(opt.step());
  // lambda_0 = 2: rgrad = g / 4 = (0.75, 1); exp_0(-0.5 rgrad) = -tanh(|u|) u / |u| with |u| = 0.625.
  const auto got = p.to_vector<double>();
  EXPECT_NEAR(got[0], -std::tanh(0.625) * 0.6, 1e-12);
  EXPECT_NEAR(got[1], -std::tanh(0.625) * 0.8, 1e-12);
}

TEST(Riemannian, OrdinaryParametersGetPlainSgd) {
  Tensor a = Tensor::from_vector<double>({1.0, -2.0, 0.5}, {3});
  Tensor b = a.clone();
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  optim::RiemannianSGD ra({optim::ParamGroup{{a}, {}}}, 0.1, 0.9);
  optim::SGD sb({optim::ParamGroup{{b}, {}}}, 0.1, 0.9);
  for (int i = 0; i < 3; ++i) {
    a.set_grad(mul(a.detach(), 2.0));
    b.set_grad(mul(b.detach(), 2.0));
    ra.step();
    sb.step();
  }
  EXPECT_TRUE(allclose(a.detach(), b.detach(), 1e-12, 1e-14));
}

TEST(Riemannian, AdamStaysInTheBallAndReachesTheTarget) {
  const double c = -2.0;
  Tensor p = Tensor::from_vector<double>({0.6, -0.3}, {1, 2});
  p.set_requires_grad(true);
  p.set_manifold_curvature(c);
  const Tensor target = Tensor::from_vector<double>({-0.4, 0.5}, {1, 2});
  optim::RiemannianAdam opt({optim::ParamGroup{{p}, {}}}, 0.05);
  double first = 0, last = 0;
  for (int i = 0; i < 200; ++i) {
    p.set_grad({});
    Tensor d = sum(g::poincare_distance(p, target, c));
    d.backward();
    if (i == 0) first = d.item();
    last = d.item();
    opt.step();
    EXPECT_LT(sum(square(p.detach())).item(), 1.0 / 2.0);
  }
  EXPECT_LT(last, 0.05 * first);
}

TEST(Riemannian, ManifoldTagIsChecked) {
  Tensor t = zeros({2});
  EXPECT_THROW(t.set_manifold_curvature(0.5), ValueError);
  t.set_manifold_curvature(-1.0);
  EXPECT_EQ(t.manifold_curvature(), -1.0);
  EXPECT_EQ(t.detach().manifold_curvature(), 0.0);  // a new tensor object is untagged
}
