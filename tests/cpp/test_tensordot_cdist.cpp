// Tests for tensordot (src/ops/products.cpp), cdist (src/ops/distance.cpp) and meshgrid
// (src/ops/grids.cpp): values against loops, gradients against float64 finite differences, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "spiraltorch/ops.h"
#include "expect_error.h"

using st::test::expect_error;
using namespace st;

namespace {

std::vector<double> dv(const Tensor& t) { return cast(t, Dtype::Float64).contiguous().to_vector<double>(); }

}  // namespace

TEST(Tensordot, MatchesLoops) {
  manual_seed(1);
  const Tensor a = randn({2, 3, 4}, Dtype::Float64), b = randn({3, 4, 5}, Dtype::Float64);
  const auto av = dv(a), bv = dv(b);
  const auto out = dv(tensordot(a, b, 2));
  ASSERT_EQ(tensordot(a, b, 2).shape(), (Shape{2, 5}));
  for (int i = 0; i < 2; ++i) {
    for (int l = 0; l < 5; ++l) {
      double s = 0;
      for (int j = 0; j < 3; ++j) {
        for (int k = 0; k < 4; ++k) s += av[(i * 3 + j) * 4 + k] * bv[(j * 4 + k) * 5 + l];
      }
      EXPECT_NEAR(out[i * 5 + l], s, 1e-12);
    }
  }
  // Listed pairs: a's dim 0 with c's dim 1 (sizes 2).
  const Tensor c = randn({4, 2}, Dtype::Float64);
  const Tensor p = tensordot(a, c, {0}, {1});
  ASSERT_EQ(p.shape(), (Shape{3, 4, 4}));
  const auto cv = dv(c), pv = dv(p);
  for (int j = 0; j < 3; ++j) {
    for (int k = 0; k < 4; ++k) {
      for (int m = 0; m < 4; ++m) {
        double s = 0;
        for (int i = 0; i < 2; ++i) s += av[(i * 3 + j) * 4 + k] * cv[m * 2 + i];
        EXPECT_NEAR(pv[(j * 4 + k) * 4 + m], s, 1e-12);
      }
    }
  }
  EXPECT_EQ(tensordot(a, b, 0).shape(), (Shape{2, 3, 4, 3, 4, 5}));  // the outer product
}

TEST(Tensordot, GradientAndErrors) {
  manual_seed(2);
  const Tensor a = randn({2, 3, 4}, Dtype::Float64), b = randn({4, 3, 2}, Dtype::Float64);
  test_util::gradcheck_all([&] { return tensordot(a, b, {1, 2}, {1, 0}); }, {a, b});
  expect_error<ShapeError>([&] { tensordot(zeros({2, 3}), zeros({4, 5}), 1); },
                           {"tensordot", "dim 1 of a (2, 3) has size 3", "dim 0 of b (4, 5) has size 4"});
  expect_error<ValueError>([&] { tensordot(zeros({2, 3}), zeros({3}), 2); },
                           {"tensordot", "dims=2", "between 0 and 1"});
  expect_error<ValueError>([&] { tensordot(a, b, {0, 1}, {0}); }, {"tensordot", "2 dims of a", "1 dims of b"});
}

TEST(Cdist, MatchesLoopsForEachP) {
  manual_seed(3);
  const Tensor x1 = randn({2, 5, 3}, Dtype::Float64), x2 = randn({2, 4, 3}, Dtype::Float64);
  const auto a = dv(x1), b = dv(x2);
  for (const double p : {2.0, 1.0, 3.0, 0.0, std::numeric_limits<double>::infinity()}) {
    const Tensor d = cdist(x1, x2, p);
    ASSERT_EQ(d.shape(), (Shape{2, 5, 4}));
    const auto dvv = dv(d);
    for (int bt = 0; bt < 2; ++bt) {
      for (int i = 0; i < 5; ++i) {
        for (int j = 0; j < 4; ++j) {
          double acc = 0;
          for (int k = 0; k < 3; ++k) {
            const double diff = std::abs(a[(bt * 5 + i) * 3 + k] - b[(bt * 4 + j) * 3 + k]);
            if (std::isinf(p)) {
              acc = std::max(acc, diff);
            } else if (p == 0) {
              acc += diff != 0;
            } else {
              acc += std::pow(diff, p);
            }
          }
          const double want = (std::isinf(p) || p == 0) ? acc : std::pow(acc, 1.0 / p);
          EXPECT_NEAR(dvv[(bt * 5 + i) * 4 + j], want, 1e-12) << "p=" << p;
        }
      }
    }
  }
}

TEST(Cdist, GradientAndErrors) {
  manual_seed(4);
  const Tensor a = randn({4, 3}, Dtype::Float64), b = randn({5, 3}, Dtype::Float64);
  for (const double p : {1.0, 2.0, 3.0, 0.5, std::numeric_limits<double>::infinity()}) {
    const Tensor x1 = a.clone(), x2 = b.clone();  // fresh leaves: gradients accumulate
    test_util::gradcheck_all([&] { return cdist(x1, x2, p); }, {x1, x2});
  }
  expect_error<ShapeError>([] { cdist(zeros({3, 2}), zeros({3, 4})); }, {"cdist", "(3, 2)", "(3, 4)"});
  expect_error<ValueError>([] { cdist(zeros({3, 2}), zeros({3, 2}), -1.0); }, {"cdist", "p", "-1"});
}

TEST(Meshgrid, IjAndXyGridsAndGradient) {
  const Tensor a = Tensor::from_vector<double>({1, 2, 3}, {3}), b = Tensor::from_vector<double>({10, 20}, {2});
  const auto ij = meshgrid({a, b});
  ASSERT_EQ(ij.size(), 2u);
  EXPECT_EQ(ij[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(dv(ij[0]), (std::vector<double>{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(dv(ij[1]), (std::vector<double>{10, 20, 10, 20, 10, 20}));
  const auto xy = meshgrid({a, b}, "xy");
  EXPECT_EQ(xy[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(dv(xy[0]), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(dv(xy[1]), (std::vector<double>{10, 10, 10, 20, 20, 20}));
  const Tensor w = Tensor::from_vector<double>({0.5, -1, 2}, {3});
  test_util::gradcheck_all([&] { return mul(meshgrid({w, b}, "xy")[0], meshgrid({w, b}, "xy")[1]); }, {w});
  expect_error<ValueError>([&] { meshgrid({a}, "yx"); }, {"meshgrid", "'yx'"});
  expect_error<ShapeError>([] { meshgrid({zeros({2, 2})}); }, {"meshgrid", "(2, 2)"});
}
