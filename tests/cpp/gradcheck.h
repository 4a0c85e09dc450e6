#pragma once
// Finite-difference gradient checks shared by the C++ test files: autograd's gradient of
// sum(f * w), for a fixed random w, against central differences in float64.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "spiraltorch/spiraltorch.h"

namespace st::test_util {

// Every element of each float64 leaf in `wrt` (made to require grad here); f reads them.
inline void gradcheck_all(const std::function<Tensor()>& f, std::vector<Tensor> wrt, double tol = 1e-6,
                          uint64_t seed = 11) {
  for (Tensor& t : wrt) t.set_requires_grad(true);
  manual_seed(seed);
  const Tensor w = randn(f().shape(), Dtype::Float64);
  sum(mul(f(), w)).backward();
  NoGradGuard ng;
  const double eps = 1e-6;
  for (size_t k = 0; k < wrt.size(); ++k) {
    ASSERT_TRUE(wrt[k].grad().defined()) << "tensor " << k << " got no gradient";
    const auto analytic = wrt[k].grad().to_vector<double>();
    double* p = wrt[k].data<double>();
    for (int64_t i = 0; i < wrt[k].numel(); ++i) {
      const double orig = p[i];
      p[i] = orig + eps;
      const double up = sum(mul(f(), w)).item();
      p[i] = orig - eps;
      const double down = sum(mul(f(), w)).item();
      p[i] = orig;
      EXPECT_NEAR(analytic[i], (up - down) / (2 * eps), tol) << "tensor " << k << " element " << i;
    }
  }
}

// One input: f(x) for a float64 copy of x.
inline void gradcheck(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, double tol = 1e-6,
                      uint64_t seed = 7) {
  const Tensor leaf = x.detach().clone();
  gradcheck_all([&] { return f(leaf); }, {leaf}, tol, seed);
}

}  // namespace st::test_util
