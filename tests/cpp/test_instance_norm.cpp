// instance_norm: each (sample, channel) normalised over its spatial dims, float64 gradients against
// finite differences, the running-statistics update (batch average of the instance means and
// unbiased variances) and evaluation with the running statistics.
#include <gtest/gtest.h>

#include <cmath>

#include "gradcheck.h"
#include "spiraltorch/nn/normalization.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;

TEST(InstanceNorm, GradientsMatchFiniteDifferences) {
  manual_seed(3);
  const Tensor x = randn({2, 3, 4, 2}, Dtype::Float64);
  const Tensor w = randn({3}, Dtype::Float64), b = randn({3}, Dtype::Float64);
  test_util::gradcheck_all([&] { return nn::instance_norm(x, {}, {}, w, b); }, {x, w, b}, 1e-5);
}

TEST(InstanceNorm, RunningStatisticsAndEvaluation) {
  manual_seed(4);
  const Tensor x = add(mul(randn({3, 2, 5}, Dtype::Float64), 2.0), 1.0);
  Tensor rm = zeros({2}, Dtype::Float64), rv = ones({2}, Dtype::Float64);
  const Tensor y = nn::instance_norm(x, rm, rv, {}, {}, true, 0.25);
  const auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
  for (int64_t c = 0; c < 2; ++c) {
    double mean_of_means = 0, mean_of_vars = 0;
    for (int64_t n = 0; n < 3; ++n) {
      double s = 0, ss = 0, ys = 0;
      for (int64_t l = 0; l < 5; ++l) {
        const double v = xv[(n * 2 + c) * 5 + l];
        s += v;
        ss += v * v;
        ys += yv[(n * 2 + c) * 5 + l];
      }
      const double m = s / 5;
      EXPECT_NEAR(ys, 0.0, 1e-12);  // each instance centred
      mean_of_means += m / 3;
      mean_of_vars += (ss - 5 * m * m) / 4 / 3;  // unbiased
    }
    EXPECT_NEAR(rm.to_vector<double>()[c], 0.25 * mean_of_means, 1e-12);
    EXPECT_NEAR(rv.to_vector<double>()[c], 0.75 + 0.25 * mean_of_vars, 1e-12);
  }
  // use_input_stats=false: (x - running_mean) / sqrt(running_var + eps) per channel.
  const Tensor e = nn::instance_norm(x, rm, rv, {}, {}, false, 0.1, 1e-5);
  const auto ev = e.to_vector<double>(), rmv = rm.to_vector<double>(), rvv = rv.to_vector<double>();
  EXPECT_NEAR(ev[7], (xv[7] - rmv[1]) / std::sqrt(rvv[1] + 1e-5), 1e-12);
  EXPECT_THROW(nn::instance_norm(x, {}, {}, {}, {}, false), ValueError);
  EXPECT_THROW(nn::instance_norm(randn({2, 3})), ShapeError);
}
