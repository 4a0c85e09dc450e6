// Tests for src/ops/selection.cpp and src/ops/statistics.cpp: values against hand-computed results.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gradcheck.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/selection.h"
#include "spiraltorch/statistics.h"

using namespace st;

namespace {

Tensor D(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector<double>(v, s); }
Tensor L(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector<int64_t>(v, s); }
std::vector<double> dv(const Tensor& t) { return t.contiguous().to_vector<double>(); }
std::vector<int64_t> lv(const Tensor& t) { return t.contiguous().to_vector<int64_t>(); }

}  // namespace

TEST(Selection, NonzeroIndexAddRepeatDiagUnique) {
  EXPECT_EQ(lv(nonzero(D({0, 1, 2, 0}, {2, 2}))), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(nonzero(D({3}, {})).shape(), (Shape{1, 0}));
  EXPECT_EQ(dv(index_add(D({0, 0, 0, 0}, {2, 2}), 0, L({1, 1}, {2}), D({1, 2, 3, 4}, {2, 2}), 0.5)),
            (std::vector<double>{0, 0, 2, 3}));
  EXPECT_EQ(dv(repeat_interleave(D({1, 2, 3, 4}, {2, 2}), L({2, 0}, {2}), 0)), (std::vector<double>{1, 2, 1, 2}));
  EXPECT_EQ(dv(repeat_interleave(D({5, 6}, {2}), 2)), (std::vector<double>{5, 5, 6, 6}));
  EXPECT_EQ(dv(diag(D({1, 2}, {2}), -1)), (std::vector<double>{0, 0, 0, 1, 0, 0, 0, 2, 0}));
  EXPECT_EQ(dv(diag(D({1, 2, 3, 4, 5, 6}, {2, 3}), 1)), (std::vector<double>{2, 6}));
  const UniqueResult u = unique(L({3, 1, 3, 2}, {4}));
  EXPECT_EQ(lv(u.values), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(lv(u.inverse), (std::vector<int64_t>{2, 0, 2, 1}));
  EXPECT_EQ(lv(u.counts), (std::vector<int64_t>{1, 1, 2}));
  test_util::gradcheck([](const Tensor& t) { return diag(t, 1); }, D({1, 2, 3}, {3}));
}

TEST(Statistics, OrderStatisticsAndMoments) {
  const Tensor x = D({3, 1, 2, 5, 4, 4}, {2, 3});
  EXPECT_EQ(median(x).item(), 3);  // sorted 1 2 3 4 4 5: position (6 - 1) / 2 = 2
  const auto [mv, mi] = median(x, 1);
  EXPECT_EQ(dv(mv), (std::vector<double>{2, 4}));
  EXPECT_EQ(lv(mi), (std::vector<int64_t>{2, 2}));  // the stable sort puts the second 4 at position 1
  EXPECT_TRUE(std::isnan(median(D({1, std::nan(""), 2}, {3})).item()));
  EXPECT_EQ(nanmedian(D({1, std::nan(""), 2}, {3})).item(), 1);
  EXPECT_EQ(dv(kthvalue(x, 3, 1).first), (std::vector<double>{3, 5}));
  const auto [mode_v, mode_i] = mode(D({2, 1, 2, 1, 3}, {5}));
  EXPECT_EQ(mode_v.item(), 1);  // 1 and 2 both twice: the smaller, at its last occurrence
  EXPECT_EQ(mode_i.item(), 3);
  EXPECT_EQ(dv(quantile(D({1, 2, 3, 4}, {4}), {0.5, 0.25})), (std::vector<double>{2.5, 1.75}));
  EXPECT_EQ(dv(quantile(D({1, 2, 3, 4}, {4}), {0.5}, {}, false, QuantileInterpolation::Lower)),
            (std::vector<double>{2}));
  // cov of (1, 2, 3) and (2, 4, 7): var 1 and 6.3333, cross 2.5.
  const auto c = dv(cov(D({1, 2, 3, 2, 4, 7}, {2, 3})));
  EXPECT_NEAR(c[0], 1.0, 1e-12);
  EXPECT_NEAR(c[1], 2.5, 1e-12);
  EXPECT_NEAR(c[3], 19.0 / 3.0, 1e-12);
  EXPECT_NEAR(dv(corrcoef(D({1, 2, 3, 2, 4, 7}, {2, 3})))[1], 2.5 / std::sqrt(19.0 / 3.0), 1e-12);
  EXPECT_EQ(lv(bincount(L({0, 2, 2, 5}, {4}))), (std::vector<int64_t>{1, 0, 2, 0, 0, 1}));
  EXPECT_EQ(dv(histc(D({0, 0.5, 1, 2, 9}, {5}), 4, 0, 2)), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(count_nonzero(x).item(), 6);
  const auto [lo, hi] = aminmax(x, 1);
  EXPECT_EQ(dv(lo), (std::vector<double>{1, 4}));
  EXPECT_EQ(dv(hi), (std::vector<double>{3, 5}));
  EXPECT_THROW(bincount(L({-1}, {1})), ValueError);
  EXPECT_THROW(kthvalue(x, 4, 1), IndexError);
}

// The CPU's index_add kernel (Backend::index_add) against the scatter_add of the expanded index it
// replaces, for each dtype family and for index lists with repeats, across (outer, n, inner) blocks
// narrower and wider than its 64-column tasks.
TEST(Selection, IndexAddKernelMatchesScatter) {
  for (const Dtype dt : {Dtype::Float32, Dtype::Float64, Dtype::Int64, Dtype::Float16}) {
    for (const auto& [shape, dim] :
         std::vector<std::pair<Shape, int64_t>>{{{7, 3}, 0}, {{5, 200}, 0}, {{3, 6, 130}, 1}, {{4, 9}, 1}}) {
      const Tensor idx = L({2, 0, 2, 1, 2}, {5});
      Shape src_shape = shape;
      src_shape[static_cast<size_t>(dim)] = 5;
      const Tensor x = cast(floor(mul(randn(shape, Dtype::Float64), 4.0)), dt);
      const Tensor src = cast(floor(mul(randn(src_shape, Dtype::Float64), 4.0)), dt);
      const Tensor got = index_add(x, dim, idx, src);
      Shape view(shape.size(), 1);
      view[static_cast<size_t>(dim)] = 5;
      const Tensor want = scatter_add(x, dim, expand(reshape(idx, view), src_shape), src);
      EXPECT_EQ(dv(cast(got, Dtype::Float64)), dv(cast(want, Dtype::Float64))) << dtype_name(dt) << " dim " << dim;
    }
  }
  try {
    (void)index_add(D({0, 0}, {2, 1}), 0, L({2}, {1}), D({1}, {1, 1}));
    FAIL() << "an index past the end was accepted";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("index_add: index 2 is out of bounds for dimension 0 with size 2"),
              std::string::npos)
        << e.what();
  }
}
