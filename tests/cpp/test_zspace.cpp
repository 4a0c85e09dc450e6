// Z-space: encoder reference values, gradient tapes (atomic apply, applied-gradient readback),
// GradientSummary and the DFT.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/zspace/gradient_summary.h"
#include "spiraltorch/zspace/hypergrad.h"
#include "spiraltorch/zspace/language_wave_encoder.h"
#include "spiraltorch/zspace/realgrad.h"
#include "spiraltorch/zspace/spectrum.h"

using namespace st;
using namespace st::zspace;

namespace {

}  // namespace

TEST(ZSpace, DftMatchesTheDefinition) {
  const std::vector<double> x{0.3, -1.2, 2.5, 0.7, -0.1};
  const auto X = dft(x);
  for (size_t k = 0; k < x.size(); ++k) {
    std::complex<double> want = 0;
    for (size_t j = 0; j < x.size(); ++j) want += x[j] * std::polar(1.0, -2 * M_PI * double(k * j) / 5.0);
    EXPECT_NEAR(std::abs(X[k] - want), 0.0, 1e-12);
  }
}

TEST(ZSpace, EncoderReproducesTheReferenceValues) {
  const LanguageWaveEncoder enc(-1.0, 0.5);
  const Tensor z = enc.encode_z_space("spiral");
  ASSERT_EQ(z.shape(), (Shape{1, 12}));
  EXPECT_EQ(z.dtype(), Dtype::Float32);
  const std::vector<double> want{0.676302, 0, -0.157006, 0.221685, -0.136367, 0.077499,
                                 -0.145694, 0, -0.136367, -0.077499, -0.157006, -0.221685};
  const auto got = z.to(Dtype::Float64).to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  // A real signal has a Hermitian spectrum; X_0 is the signal's sum.
  const auto wave = enc.encode_wave("spiral").data();
  for (size_t j = 1; j < 6; ++j) EXPECT_NEAR(std::abs(wave[j] - std::conj(wave[6 - j])), 0.0, 1e-9);
  const auto s = enc.signal("spiral");
  EXPECT_NEAR(wave[0].real(), s[0] + s[1] + s[2] + s[3] + s[4] + s[5], 1e-12);
  // Code points, not bytes: "é" is one character.
  EXPECT_EQ(enc.encode_z_space("é").shape(), (Shape{1, 2}));
  EXPECT_THROW(LanguageWaveEncoder(0.5, 0.5), ValueError);
  EXPECT_THROW(LanguageWaveEncoder(-1.0, 0.0), ValueError);
  EXPECT_THROW(enc.encode_z_space(""), ValueError);
  EXPECT_THROW(enc.encode_z_space("\xff"), ValueError);
}

TEST(ZSpace, GradientSummaryMatchesReferenceStatistics) {
  const std::vector<double> vals{0.5, -1.5, std::nan(""), 2.0, 0.0, 3e-6};
  const GradientSummary s(vals);
  EXPECT_EQ(s.count(), 5);
  EXPECT_DOUBLE_EQ(s.l2(), std::sqrt(0.25 + 2.25 + 4.0 + 9e-12));
  EXPECT_EQ(s.linf(), 2.0);
  EXPECT_EQ(s.support_width(), 3.5);
  EXPECT_EQ(s.positive_count(), 3);
  EXPECT_EQ(s.negative_count(), 1);
  EXPECT_EQ(s.zero_count(), 1);
  EXPECT_EQ(s.near_zero_count(), 2);
  EXPECT_NEAR(s.activation(), 0.6, 1e-15);
  // fsum is exact: 0.1 * 10 sums to exactly 1.
  EXPECT_EQ(exact_sum(std::vector<double>(10, 0.1)), 1.0);
  EXPECT_EQ(exact_sum(std::vector<double>{1e100, 1.0, -1e100}), 1.0);
  EXPECT_EQ(GradientSummary().l2(), 0.0);
}

TEST(ZSpace, HypergradStepFromTheOriginIsTheExpMap) {
  const LanguageWaveEncoder enc(-1.0, 0.5);
  const Tensor wave = enc.encode_z_space("SpiralTorch in Rust");
  Tensor z = zeros({1, 38});
  Hypergrad tape(-1.0, 0.05, 1, 38);
  tape.accumulate_pair(z, wave);
  tape.apply(z);
  const Tensor want = geometry::expmap0(mul(wave.to(Dtype::Float64), 0.05), -1.0);
  EXPECT_TRUE(allclose(z.to(Dtype::Float64), want, 1e-6, 1e-6));
}

TEST(ZSpace, HypergradDescendsKeepsTheAppliedGradientAndIsAtomic) {
  const Tensor target = Tensor::from_vector(std::vector<double>{0.4, -0.3, 0.1}, {1, 3});
  Tensor w = Tensor::from_vector(std::vector<double>{-0.2, 0.1, 0.0}, {1, 3});
  Hypergrad tape(-1.0, 0.1, 1, 3);
  tape.apply(w);  // empty tape: identity
  EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{-0.2, 0.1, 0.0}));
  double prev = geometry::poincare_distance(w, target, -1.0).item();
  for (int i = 0; i < 20; ++i) {
    tape.accumulate_pair(w, target);
    tape.apply(w);
    const double d = geometry::poincare_distance(w, target, -1.0).item();
    EXPECT_LT(d, prev);
    prev = d;
  }
  EXPECT_TRUE(tape.applied());
  EXPECT_EQ(tape.pending_gradient(), (std::vector<double>{0.0, 0.0, 0.0}));
  EXPECT_NE(tape.gradient(), (std::vector<double>{0.0, 0.0, 0.0}));
  // Applying again without accumulation does not move the weights.
  const auto before = w.to_vector<double>();
  tape.apply(w);
  EXPECT_EQ(w.to_vector<double>(), before);
  EXPECT_THROW(tape.accumulate_wave(zeros({1, 4})), ValueError);
  tape.accumulate_wave(Tensor::from_vector(std::vector<float>{1, 2, 2}, {1, 3}));
  EXPECT_FALSE(tape.applied());
  EXPECT_DOUBLE_EQ(tape.summary().l2(), 3.0);
  tape.scale_gradient(-0.5);
  EXPECT_EQ(tape.gradient(), (std::vector<double>{-0.5, -1.0, -1.0}));
  EXPECT_NEAR(tape.rescale_rms(2.0), 2.0 / std::sqrt(0.75), 1e-12);
  EXPECT_NEAR(tape.summary().rms(), 2.0, 1e-12);
  // A non-finite update raises and changes neither weights nor tape.
  Hypergrad big(-1.0, 1e308, 1, 3);
  big.accumulate_wave(Tensor::from_vector(std::vector<double>{1e308, 1e308, 1e308}, {1, 3}));
  EXPECT_THROW(big.apply(w), ValueError);
  EXPECT_EQ(w.to_vector<double>(), before);
  EXPECT_FALSE(big.applied());
  // An overflowing accumulation is refused whole.
  const auto g = big.gradient();
  EXPECT_THROW(big.accumulate_wave(Tensor::from_vector(std::vector<double>{1e308, 0, 0}, {1, 3})), ValueError);
  EXPECT_EQ(big.gradient(), g);
  tape.retune(-2.0, 0.01);
  EXPECT_EQ(tape.curvature(), -2.0);
  EXPECT_EQ(tape.learning_rate(), 0.01);
  EXPECT_EQ(tape.gradient(), (std::vector<double>(3, 0.0)));
  const LanguageWaveEncoder enc(-2.0, 0.5);
  Hypergrad t2(-2.0, 0.05, 1, 4);
  t2.absorb_text(enc, "ab");
  EXPECT_EQ(t2.summary().count(), 4);
  EXPECT_THROW(Hypergrad(-1.0, 0.05, 1, 4).absorb_text(enc, "ab"), ValueError);
}

TEST(ZSpace, RealgradIsSgd) {
  Realgrad tape(0.1, 1, 3);
  Tensor w = zeros({1, 3});
  tape.accumulate_wave(Tensor::from_vector(std::vector<float>{1.0f, -2.0f, 0.5f}, {1, 3}));
  tape.apply(w);
  const auto got = w.to(Dtype::Float64).to_vector<double>();
  EXPECT_NEAR(got[0], -0.1, 1e-7);
  EXPECT_NEAR(got[1], 0.2, 1e-7);
  EXPECT_NEAR(got[2], -0.05, 1e-7);
  EXPECT_TRUE(tape.applied());
  EXPECT_EQ(tape.gradient(), (std::vector<double>{1.0, -2.0, 0.5}));
  EXPECT_THROW(Realgrad(0.0, 1, 3), ValueError);
  EXPECT_THROW(Realgrad(0.1, 0, 3), ValueError);
}
