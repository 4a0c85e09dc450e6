// Tests for block_diag, cartesian_prod, combinations, tril/triu_indices and logspace
// (src/ops/constructors.cpp): values as torch's on the same inputs, gradients against float64 finite
// differences, errors naming the op and the values.
#include "spiraltorch/constructors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "expect_error.h"

using st::test::expect_error;
using namespace st;

namespace {

std::vector<double> dv(const Tensor& t) { return cast(t, Dtype::Float64).contiguous().to_vector<double>(); }
std::vector<int64_t> lv(const Tensor& t) { return cast(t, Dtype::Int64).contiguous().to_vector<int64_t>(); }
Tensor D(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector<double>(v, s); }

}  // namespace

TEST(BlockDiag, ValuesPromotionAndGradient) {
  const Tensor a = D({1, 2, 3, 4}, {2, 2}), b = D({5, 6}, {2}), c = D({7}, {});
  const Tensor m = block_diag({a, b, c});
  EXPECT_EQ(m.shape(), (Shape{4, 5}));
  EXPECT_EQ(dv(m), (std::vector<double>{1, 2, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0, 5, 6, 0, 0, 0, 0, 0, 7}));
  EXPECT_EQ(block_diag({Tensor::from_vector<int64_t>({1}, {1}), b}).dtype(), Dtype::Float64);
  EXPECT_EQ(block_diag({}).shape(), (Shape{1, 0}));
  test_util::gradcheck_all([&] { return block_diag({a, b, c}); }, {a, b, c});
  expect_error<ShapeError>([] { block_diag({zeros({1, 1, 1})}); }, {"block_diag", "input 0 has 3 dimensions"});
}

TEST(CartesianProd, RowsInOrderAndGradient) {
  const Tensor x = D({1, 2}, {2}), y = D({3, 4, 5}, {3});
  const Tensor p = cartesian_prod({x, y});
  EXPECT_EQ(p.shape(), (Shape{6, 2}));
  EXPECT_EQ(dv(p), (std::vector<double>{1, 3, 1, 4, 1, 5, 2, 3, 2, 4, 2, 5}));
  EXPECT_EQ(dv(cartesian_prod({x})), dv(x));
  test_util::gradcheck_all([&] { return cartesian_prod({x, y}); }, {x, y});
  expect_error<ShapeError>([] { cartesian_prod({zeros({2, 2})}); }, {"cartesian_prod", "(2, 2)"});
}

TEST(Combinations, ItertoolsOrder) {
  const Tensor x = D({1, 2, 4, 8}, {4});
  EXPECT_EQ(dv(combinations(x, 2)), (std::vector<double>{1, 2, 1, 4, 1, 8, 2, 4, 2, 8, 4, 8}));
  EXPECT_EQ(combinations(x, 3, true).shape(), (Shape{20, 3}));
  EXPECT_EQ(dv(combinations(D({1, 2}, {2}), 2, true)), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(combinations(x, 5).shape(), (Shape{0, 5}));
  EXPECT_EQ(combinations(x, 0).shape(), (Shape{0}));
  test_util::gradcheck_all([&] { return combinations(x, 2); }, {x});
  expect_error<ValueError>([&] { combinations(x, -1); }, {"combinations", "-1"});
}

TEST(TriIndices, AsTorch) {
  // torch.tril_indices(3, 4, 1) and torch.triu_indices(3, 4, 1).
  EXPECT_EQ(lv(tril_indices(3, 4, 1)), (std::vector<int64_t>{0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 1, 0, 1, 2, 0, 1, 2, 3}));
  EXPECT_EQ(lv(triu_indices(3, 4, 1)), (std::vector<int64_t>{0, 0, 0, 1, 1, 2, 1, 2, 3, 2, 3, 3}));
  EXPECT_EQ(tril_indices(0, 3).shape(), (Shape{2, 0}));
  EXPECT_EQ(tril_indices(2, 2, 0, Dtype::Int32).dtype(), Dtype::Int32);
  expect_error<ValueError>([] { tril_indices(-1, 2); }, {"tril_indices", "row=-1"});
}

TEST(Logspace, Values) {
  const auto v = dv(logspace(-2, 2, 5, 2.0, Dtype::Float64));
  const std::vector<double> want = {0.25, 0.5, 1, 2, 4};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-15);
  EXPECT_EQ(logspace(0, 1, 3).dtype(), Dtype::Float32);
  EXPECT_EQ(logspace(0, 1, 0).numel(), 0);
  expect_error<ValueError>([] { logspace(0, 1, -1); }, {"logspace", "-1"});
}
