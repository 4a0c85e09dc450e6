// backend/common/loop_plan.h: the loop every backend walks strided operands with.
#include <gtest/gtest.h>

#include "backend/common/loop_plan.h"

using st::Shape;
using st::backend::LoopPlan;
using st::backend::plan_loop;

TEST(LoopPlan, ContiguousOperandsOfAnyRankAreOneRun) {
  const Shape shape{2, 3, 4, 5};
  const Shape strides = st::contiguous_strides(shape);
  const LoopPlan<2> plan = plan_loop<2>(shape, {&strides, &strides});
  ASSERT_EQ(plan.nd(), 1);
  EXPECT_EQ(plan.sizes[0], 120);
  EXPECT_EQ(plan.strides[0][0], 1);
  EXPECT_EQ(plan.strides[0][1], 1);
}

TEST(LoopPlan, BroadcastBiasBecomesRowsTimesColumns) {
  // out (B, T, C) contiguous; bias (C) expanded: strides (0, 0, 1).
  const Shape shape{4, 6, 8};
  const Shape out = st::contiguous_strides(shape);
  const Shape bias{0, 0, 1};
  const LoopPlan<2> plan = plan_loop<2>(shape, {&out, &bias});
  ASSERT_EQ(plan.nd(), 2);
  EXPECT_EQ(plan.sizes, (std::vector<int64_t>{24, 8}));
  EXPECT_EQ(plan.strides[0], (std::array<int64_t, 2>{8, 0}));
  EXPECT_EQ(plan.strides[1], (std::array<int64_t, 2>{1, 1}));
}

TEST(LoopPlan, TransposedOperandKeepsItsDimensionsAndSizeOneDimsDrop) {
  const Shape shape{3, 1, 5};
  const Shape out = st::contiguous_strides(shape);  // (5, 5, 1)
  const Shape transposed{1, 99, 3};                 // a (5, 3) tensor viewed as (3, 1, 5)
  const LoopPlan<2> plan = plan_loop<2>(shape, {&out, &transposed});
  ASSERT_EQ(plan.nd(), 2);
  EXPECT_EQ(plan.sizes, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(plan.strides[0], (std::array<int64_t, 2>{5, 1}));
  EXPECT_EQ(plan.strides[1], (std::array<int64_t, 2>{1, 3}));
}

TEST(LoopPlan, ScaleGivesByteStridesPerOperand) {
  const Shape shape{2, 3};
  const Shape strides = st::contiguous_strides(shape);
  const Shape column{1, 0};  // a (2, 1) tensor expanded along dim 1
  const LoopPlan<2> plan = plan_loop<2>(shape, {&strides, &column}, {4, 8});
  ASSERT_EQ(plan.nd(), 2);
  EXPECT_EQ(plan.strides[0], (std::array<int64_t, 2>{12, 8}));
  EXPECT_EQ(plan.strides[1], (std::array<int64_t, 2>{4, 0}));
}

TEST(LoopPlan, ScalarAndAllOnesShapesAreOneElement) {
  const Shape scalar{};
  const LoopPlan<1> plan = plan_loop<1>(scalar, {&scalar});
  ASSERT_EQ(plan.nd(), 1);
  EXPECT_EQ(plan.sizes[0], 1);
  EXPECT_EQ(plan.strides[0][0], 0);
  const Shape ones{1, 1, 1};
  const Shape strides{7, 7, 7};
  EXPECT_EQ(plan_loop<1>(ones, {&strides}).sizes, (std::vector<int64_t>{1}));
}

TEST(LoopPlan, EmptyShapeKeepsItsZeroExtent) {
  const Shape shape{4, 0, 3};
  const Shape strides = st::contiguous_strides(shape);
  const LoopPlan<1> plan = plan_loop<1>(shape, {&strides});
  int64_t numel = 1;
  for (const int64_t s : plan.sizes) numel *= s;
  EXPECT_EQ(numel, 0);
}
