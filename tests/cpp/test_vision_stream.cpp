// Vision streams: slice profiles, chrono summaries and merges, the bounded frame ring, the EMA
// volume and the online step into a ZSpaceTrainer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/vision/stream.h"

using namespace st;

TEST(VisionStream, SliceProfileAndEntropy) {
  // Slice 0 all ones (energy 1), slice 1 all zeros: entropy 0 bits; equal energies: 1 bit.
  const Tensor v = Tensor::from_vector<float>({1, 1, 1, 1, 0, 0, 0, 0}, {2, 2, 2});
  const auto p = vision::slice_profile(v);
  EXPECT_EQ(p.depth, 2);
  EXPECT_DOUBLE_EQ(p.energies[0], 1.0);
  EXPECT_DOUBLE_EQ(p.total_energy, 1.0);
  EXPECT_DOUBLE_EQ(p.energy_entropy, 0.0);
  const auto q = vision::slice_profile(Tensor::from_vector<float>({1, -1, 1, -1, 2, 0, 0, 0}, {2, 2, 2}));
  EXPECT_NEAR(q.stds[0], 1.0, 1e-12);
  EXPECT_NEAR(q.energy_entropy, 1.0, 1e-12);
}

TEST(VisionStream, ChronoSummaryAndMergeMatchOneStream) {
  const std::vector<double> t{0.0, 0.5, 1.0, 2.0}, e{1.0, 2.0, 1.0, 1.5};
  const auto s = vision::chrono_summary(t, e).summary;
  EXPECT_EQ(s.frames, 4);
  EXPECT_DOUBLE_EQ(s.duration, 2.0);
  EXPECT_DOUBLE_EQ(s.mean_drift, (2.0 - 2.0 + 0.5) / 3.0);
  EXPECT_DOUBLE_EQ(s.mean_decay, 1.0 / 3.0);  // one decay among three steps: (2-1)/(2*0.5) = 1
  // Pooled energy statistics of two halves equal those of the whole.
  const auto a = vision::chrono_summary(std::span(t).first(2), std::span(e).first(2));
  const auto b = vision::chrono_summary(std::span(t).last(2), std::span(e).last(2));
  const auto m = vision::ChronoSnapshot::merge(a, b).summary;
  EXPECT_EQ(m.frames, 4);
  EXPECT_NEAR(m.mean_energy, s.mean_energy, 1e-12);
  EXPECT_NEAR(m.energy_std, s.energy_std, 1e-12);
  EXPECT_DOUBLE_EQ(m.latest_timestamp, 2.0);
  EXPECT_THROW(vision::chrono_summary(std::vector<double>{1.0, 0.5}, std::vector<double>{1.0, 1.0}), ValueError);
  EXPECT_THROW(vision::chrono_summary(std::vector<double>{1.0}, std::vector<double>{}), ShapeError);
}

TEST(VisionStream, AggregatorKeepsAtMostMaxDepthSlices) {
  vision::FrameAggregator agg(3);
  for (int k = 0; k < 10; ++k) agg.extend(full({2, 4, 4}, static_cast<double>(k)), 0.1 * k);
  EXPECT_EQ(agg.depth(), 3);
  EXPECT_EQ(agg.frames_seen(), 10);
  const auto v = agg.volume().to_vector<float>();
  EXPECT_EQ(v.front(), 8.0f);  // the newest slices: one of frame 8, two of frame 9
  EXPECT_EQ(v.back(), 9.0f);
  const auto c = agg.chrono();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->summary.frames, 2);
  EXPECT_NEAR(c->summary.latest_timestamp, 0.9, 1e-12);
  EXPECT_THROW(agg.extend(zeros({1, 3, 3}), 1.0), ShapeError);
  agg.prune_oldest(0);
  EXPECT_TRUE(agg.empty());
  EXPECT_THROW(vision::FrameAggregator(0), ValueError);
}

TEST(VisionStream, OnlineStepTrainsAndDependsOnTheInput) {
  vision::VisionVolume a(2, 4, 4, 0.5), b(2, 4, 4, 0.5);
  zspace::ZSpaceTrainer::Options o;
  o.z_dim = 4;
  zspace::ZSpaceTrainer ta(o), tb(o);
  double la = 0, lb = 0;
  for (int k = 0; k < 5; ++k) {
    la = *vision::online_step(a, rand_seeded({2, 4, 4}, 10 + k), 1.0, &ta).loss;
    lb = *vision::online_step(b, full({2, 4, 4}, 0.1 * k), 1.0, &tb).loss;
    EXPECT_TRUE(std::isfinite(la) && std::isfinite(lb));
  }
  EXPECT_NE(la, lb);
  EXPECT_NE(ta.state(), tb.state());
  // Mass in the top rows: the centred band gradient is positive first, negative last.
  vision::VisionVolume top(1, 8, 4, 1.0);
  std::vector<float> upper(32, 0.0f);
  std::fill(upper.begin(), upper.begin() + 16, 1.0f);
  top.accumulate(Tensor::from_vector(upper, {1, 8, 4}));
  const auto m = vision::default_metrics(top, 0.0, 4);
  ASSERT_TRUE(m.gradient().has_value());
  ASSERT_EQ(m.gradient()->size(), 4u);
  EXPECT_DOUBLE_EQ((*m.gradient())[0], 0.5);
  EXPECT_DOUBLE_EQ((*m.gradient())[3], -0.5);
  EXPECT_EQ(a.updates(), 5);
  EXPECT_EQ(static_cast<int64_t>(a.energy_history().size()), 4);  // temporal window
  EXPECT_THROW(a.accumulate(zeros({3, 4, 4})), ShapeError);
  EXPECT_THROW(a.accumulate(zeros({2, 4, 5})), ShapeError);
  EXPECT_GT(a.accumulate(ones({1, 4, 4})), 0.0);  // a partial window updates the newest slice
  EXPECT_THROW(a.accumulate(zeros({2, 4, 4}), -1.0), ValueError);
  const auto p = a.project(true).to_vector<float>();
  float peak = 0;
  for (float x : p) peak = std::max(peak, std::abs(x));
  EXPECT_NEAR(peak, 1.0f, 1e-6);
}
