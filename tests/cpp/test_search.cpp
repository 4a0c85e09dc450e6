// Tests for searchsorted and bucketize (src/ops/search.cpp, the CPU kernel in src/backend/cpu/search.cpp):
// values against hand-computed insertion points (torch's on the same inputs), NaN, sorter, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "spiraltorch/ops.h"
#include "expect_error.h"

using st::test::expect_error;
using namespace st;

namespace {

Tensor D(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector<double>(v, s); }
Tensor L(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector<int64_t>(v, s); }
std::vector<int64_t> lv(const Tensor& t) { return cast(t, Dtype::Int64).contiguous().to_vector<int64_t>(); }

}  // namespace

TEST(Searchsorted, OneSequenceForEveryValue) {
  const Tensor seq = D({1, 3, 5, 7, 9}, {5});
  const Tensor x = D({0, 1, 3, 6, 9, 10, std::nan(""), 5}, {2, 4});
  // torch.searchsorted(seq, x) and (..., right=True).
  EXPECT_EQ(lv(searchsorted(seq, x)), (std::vector<int64_t>{0, 0, 1, 3, 4, 5, 5, 2}));
  EXPECT_EQ(lv(searchsorted(seq, x, true)), (std::vector<int64_t>{0, 1, 2, 3, 5, 5, 5, 3}));
  const Tensor out = searchsorted(seq, x);
  EXPECT_EQ(out.dtype(), Dtype::Int64);
  EXPECT_EQ(out.shape(), (Shape{2, 4}));
  EXPECT_EQ(searchsorted(seq, x, false, true).dtype(), Dtype::Int32);
}

TEST(Searchsorted, RowsOfSequencesAndRepeatedEntries) {
  const Tensor seq = D({1, 3, 5, 7, 2, 4, 6, 8}, {2, 4});
  const Tensor v = D({3, 6, 9, 3, 6, 0}, {2, 3});
  EXPECT_EQ(lv(searchsorted(seq, v)), (std::vector<int64_t>{1, 3, 4, 1, 2, 0}));
  EXPECT_EQ(lv(searchsorted(seq, v, true)), (std::vector<int64_t>{2, 3, 4, 1, 3, 0}));
  const Tensor rep = D({1, 2, 2, 2, 3}, {5});
  EXPECT_EQ(lv(searchsorted(rep, D({2}, {1}))), (std::vector<int64_t>{1}));
  EXPECT_EQ(lv(searchsorted(rep, D({2}, {1}), true)), (std::vector<int64_t>{4}));
}

TEST(Searchsorted, MixedDtypesScalarsAndSorter) {
  const Tensor iseq = L({1, 3, 5, 6}, {4});
  // A float between integers keeps its fraction.
  EXPECT_EQ(lv(searchsorted(iseq, Scalar(5.5))), (std::vector<int64_t>{3}));
  EXPECT_EQ(searchsorted(iseq, Scalar(5.5)).dim(), 0);
  EXPECT_EQ(lv(searchsorted(iseq, Scalar(int64_t{5}), true)), (std::vector<int64_t>{3}));
  EXPECT_EQ(lv(searchsorted(iseq, D({0.5, 6.0}, {2}))), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(lv(searchsorted(cast(D({1, 2, 4}, {3}), Dtype::Float32), D({3}, {1}))), (std::vector<int64_t>{2}));
  const Tensor unsorted = D({5, 1, 9, 3}, {4});
  const Tensor sorter = L({1, 3, 0, 2}, {4});
  EXPECT_EQ(lv(searchsorted(unsorted, D({4, 9}, {2}), false, false, sorter)), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(lv(searchsorted(unsorted, D({4, 9}, {2}), true, false, sorter)), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(searchsorted(iseq, zeros({0}, Dtype::Int64)).numel(), 0);
}

TEST(Bucketize, AsTorch) {
  const Tensor bnd = D({1, 3, 5, 7, 9}, {5});
  const Tensor x = D({0, 1, 3, 6, 9, 10}, {6});
  EXPECT_EQ(lv(bucketize(x, bnd)), (std::vector<int64_t>{0, 0, 1, 3, 4, 5}));
  EXPECT_EQ(lv(bucketize(x, bnd, true)), (std::vector<int64_t>{0, 1, 2, 3, 5, 5}));
}

TEST(Searchsorted, ErrorsNameTheOpAndShapes) {
  expect_error<ShapeError>([] { searchsorted(zeros({2, 3}), zeros({3, 1})); },
                           {"searchsorted", "(2, 3)", "(3, 1)", "agree in every dim"});
  expect_error<ShapeError>([] { searchsorted(zeros({}), zeros({1})); }, {"searchsorted", "at least one dimension"});
  expect_error<ShapeError>([] { searchsorted(zeros({3}), zeros({1}), false, false, L({0, 1}, {2})); },
                           {"searchsorted", "sorter", "must have the shape of sorted_sequence (3"});
  expect_error<ShapeError>([] { bucketize(zeros({3}), zeros({2, 2})); }, {"bucketize", "1-D", "(2, 2)"});
}
