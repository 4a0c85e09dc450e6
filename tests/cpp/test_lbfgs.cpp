// LBFGS: converges on a quadratic with and without the strong-Wolfe line search, keeps its
// history in the first parameter's state, and refuses a step without a closure.
#include <gtest/gtest.h>

#include "spiraltorch/optim/lbfgs.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

namespace {

// sum(scale * (x - target)^2) with its gradient left in x.
double quadratic_step(optim::Optimizer& opt, Tensor& x, const Tensor& target, const Tensor& scale) {
  opt.zero_grad();
  Tensor loss = sum(mul(scale, pow(sub(x, target), 2.0)));
  loss.backward();
  return loss.item();
}

}  // namespace

TEST(LBFGS, ConvergesOnAQuadratic) {
  for (const std::string line_search : {"", "strong_wolfe"}) {
    Tensor x = Tensor::from_vector(std::vector<double>{3.0, -2.0, 0.5}, {3});
    x.set_requires_grad(true);
    const Tensor target = Tensor::from_vector(std::vector<double>{1.0, 0.5, -1.0}, {3});
    const Tensor scale = Tensor::from_vector(std::vector<double>{1.0, 10.0, 0.1}, {3});
    optim::LBFGS opt({{{x}, {}}}, 1.0, 50, -1, 1e-10, 1e-12, 10, line_search);
    const double first = opt.step([&] { return quadratic_step(opt, x, target, scale); });
    EXPECT_NEAR(first, 4.0 + 62.5 + 0.225, 1e-12);
    const auto v = x.detach().to_vector<double>();
    EXPECT_NEAR(v[0], 1.0, 1e-6) << line_search;
    EXPECT_NEAR(v[1], 0.5, 1e-6) << line_search;
    EXPECT_NEAR(v[2], -1.0, 1e-6) << line_search;
    const optim::ParamState* s = opt.state_of(x);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->buffers.count("d") && s->buffers.count("old_dirs.0") && s->buffers.count("func_evals"));
    EXPECT_GT(s->step, 1);
  }
}

TEST(LBFGS, NeedsAClosureAndOneGroup) {
  Tensor x = zeros({2});
  x.set_requires_grad(true);
  optim::LBFGS opt({{{x}, {}}});
  EXPECT_THROW(opt.step(std::function<double()>()), ValueError);
  // The base class's closure-free step refuses too once there is a gradient to apply.
  x.set_grad(ones({2}));
  EXPECT_THROW(static_cast<optim::Optimizer&>(opt).step(), ValueError);
  EXPECT_THROW(optim::LBFGS({{{x}, {}}}, 1.0, 20, -1, 1e-7, 1e-9, 100, "armijo"), ValueError);
}
