// Z-space tools from C++: barycenter parity values, topos saturation, biomes, SoT-3D plans.
#include <gtest/gtest.h>

#include <cmath>

#include "spiraltorch/zspace/zspace_projector.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/zspace/barycenter.h"
#include "spiraltorch/zspace/biome.h"
#include "spiraltorch/zspace/sot.h"

using namespace st;

TEST(ZSpaceTools, BarycenterReferenceValues) {
  const auto b = zspace::z_space_barycenter(
      {1.0, 2.0}, {Tensor::from_vector<double>({0.8, 0.2}, {2}), Tensor::from_vector<double>({0.3, 0.7}, {2})}, 0.1,
      0.0);
  const auto rho = b.density.to_vector<double>();
  EXPECT_NEAR(rho[0], 0.475157, 1e-6);
  EXPECT_NEAR(b.kl_energy, 0.393542, 1e-6);
  EXPECT_NEAR(b.entropy, 0.691912, 1e-6);
  EXPECT_NEAR(b.objective, 0.324351, 1e-6);
  ASSERT_EQ(b.intermediates.size(), 5u);
  for (size_t i = 1; i < b.intermediates.size(); ++i) {
    EXPECT_LE(b.intermediates[i].objective, b.intermediates[i - 1].objective + 1e-12);
  }
  EXPECT_THROW(zspace::z_space_barycenter({1.0}, {Tensor::from_vector<double>({0.5, 0.5}, {2})}, -1.5, 0.0),
               ValueError);
}

TEST(ZSpaceTools, ToposSaturationIsMonotoneAndBounded) {
  const zspace::OpenCartesianTopos topos(-1.0, 1e-3, 1.0, 8, 16);
  double prev = -1e9;
  for (double v = -50; v <= 50; v += 0.25) {
    const double s = topos.saturate(v);
    EXPECT_GT(s, prev);
    EXPECT_LT(std::abs(s), 1.0 + 0.2 * 1e-3);
    prev = s;
  }
  EXPECT_EQ(topos.saturate(std::nan("")), 0.0);
  EXPECT_THROW(topos.guard_tensor(zeros({17})), ShapeError);
  EXPECT_THROW(topos.ensure_loop_free(8), ValueError);
}

TEST(ZSpaceTools, BiomeRefusesAndKeepsItsState) {
  zspace::TensorBiome biome(zspace::OpenCartesianTopos(-1.0, 1e-3, 5.0, 8, 4, 0.0));
  biome.absorb(ones({2}));
  biome.absorb_weighted(full({2}, 3.0), 3.0);
  const double mean = (5.0 * std::tanh(1.0 / 5.0) + 3.0 * 5.0 * std::tanh(3.0 / 5.0)) / 4.0;
  EXPECT_NEAR(biome.canopy().to_vector<double>()[0], 5.0 * std::tanh(mean / 5.0), 1e-12);
  EXPECT_THROW(biome.absorb(ones({2})), ShapeError);  // volume 4 already used
  EXPECT_EQ(biome.size(), 2u);
}

TEST(ZSpaceTools, SotPlanPacing) {
  EXPECT_EQ(zspace::sot::fibonacci_pacing(24), (std::vector<int64_t>{1, 1, 2, 3, 5, 8, 4}));
  EXPECT_EQ(zspace::sot::pack_tribonacci_chunks(13), (std::vector<int64_t>{7, 4, 1, 1}));
  EXPECT_EQ(zspace::sot::pack_tetranacci_chunks(13), (std::vector<int64_t>{8, 2, 2, 1}));
  const zspace::sot::Plan plan(24, 1.0, 0.05, 1.0, 0.0, 0.0);
  ASSERT_EQ(plan.steps().size(), 24u);
  EXPECT_NEAR(plan.steps()[5].radius / plan.steps()[4].radius, std::exp(0.05), 1e-12);
  EXPECT_EQ(plan.as_tensor().shape(), (Shape{24, 3}));
}

TEST(ZSpaceTools, ProjectorOutputsStayInTheBall) {
  manual_seed(0);
  nn::ZSpaceProjector proj(4, -2.0);
  const Tensor y = proj(mul(randn({16, 4}), 50.0));
  EXPECT_LT(amax(sum(square(y), {-1})).item(), 0.5);
}

#include "spiraltorch/zspace/realgrad.h"

TEST(ZSpaceTools, TapeAccumulatesTheBarycenterCorridor) {
  const auto b = zspace::z_space_barycenter(
      {1.0, 2.0}, {Tensor::from_vector<double>({0.8, 0.2}, {1, 2}), Tensor::from_vector<double>({0.3, 0.7}, {1, 2})},
      0.1, 0.0);
  zspace::Realgrad tape(1.0, 1, 2);
  tape.accumulate_barycenter_path(b.intermediates);
  Tensor w = b.intermediates.front().density.clone();
  tape.apply(w);
  EXPECT_TRUE(allclose(w, b.intermediates.back().density, 1e-12, 1e-12));
  EXPECT_THROW(tape.accumulate_barycenter_path({}), ValueError);
}
