// Z-space: encoder reference values, gradient tapes (atomic apply, applied-gradient readback),
// GradientSummary, decoding, the spectral penalty's gradient and ZSpaceTrainer (Adam, state checks).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/zspace/amegagrad.h"
#include "spiraltorch/zspace/desire_control.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/zspace/decode.h"
#include "spiraltorch/zspace/gradient_summary.h"
#include "spiraltorch/zspace/hypergrad.h"
#include "spiraltorch/zspace/language_wave_encoder.h"
#include "spiraltorch/zspace/realgrad.h"
#include "spiraltorch/zspace/spectrum.h"
#include "spiraltorch/zspace/trainer.h"

using namespace st;
using namespace st::zspace;

namespace {

double value_of(const NamedValues& v, const std::string& name) {
  for (const auto& [k, x] : v) {
    if (k == name) return x;
  }
  ADD_FAILURE() << "no " << name;
  return 0.0;
}

ObservedMetrics metrics(std::initializer_list<std::pair<const char*, double>> values,
                        std::optional<std::vector<double>> gradient = std::nullopt) {
  ObservedMetrics m;
  for (const auto& [k, v] : values) m.set(k, v, "test");
  if (gradient) m.set_gradient("gradient", *gradient, "test");
  return m;
}

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
  const std::vector<double> want{0.676302,  0, -0.157006, 0.221685,  -0.136367, 0.077499,
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

TEST(ZSpace, DecodeMatchesTheReferenceValues) {
  const auto d = decode_zspace(std::vector<double>{0.12, -0.03, 0.48, -0.2});
  EXPECT_NEAR(value_of(d, "speed"), 0.4463025, 1e-7);
  EXPECT_NEAR(value_of(d, "memory"), 0.1099104, 1e-7);
  EXPECT_NEAR(value_of(d, "stability"), 0.6729346, 1e-7);
  EXPECT_NEAR(value_of(d, "drs"), 0.6413202, 1e-7);
  EXPECT_NEAR(value_of(d, "frac"), 0.6490009, 1e-7);
  EXPECT_THROW(decode_zspace(std::vector<double>{}), ValueError);
}

TEST(ZSpace, FractionalPenaltyGradientMatchesFiniteDifferences) {
  for (const size_t n : {2u, 5u, 8u}) {
    std::vector<double> z(n);
    for (size_t i = 0; i < n; ++i) z[i] = 0.3 * std::sin(1.7 * double(i) + 0.4) - 0.05 * double(i);
    const auto pen = fractional_penalty(z, 0.35);
    std::vector<double> fd(n);
    double peak = 1.0;
    for (size_t i = 0; i < n; ++i) {
      auto up = z, down = z;
      up[i] += 1e-6;
      down[i] -= 1e-6;
      fd[i] = (fractional_penalty(up, 0.35).value - fractional_penalty(down, 0.35).value) / 2e-6;
      peak = std::max(peak, std::fabs(fd[i]));
    }
    // The reported gradient is dR/dz scaled to max-abs <= 1.
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(pen.gradient[i], fd[i] / peak, 1e-6) << n << " " << i;
  }
  EXPECT_EQ(fractional_penalty(std::vector<double>{0.5}, 0.35).value, 0.0);
}

TEST(ZSpace, TrainerStepIsAdamOnTheSquashedGradient) {
  ZSpaceTrainer t;
  const double obj =
      t.step(metrics({{"speed", 0.2}, {"memory", 0.1}, {"stability", 0.9}}, std::vector<double>(3, 0.0)));
  EXPECT_NEAR(obj, 0.5 * std::tanh(0.2) + 0.3 * std::tanh(0.1) + 0.2 * std::tanh(0.9), 1e-15);
  EXPECT_EQ(t.state(), std::vector<double>(4, 0.0));  // zero gradient and penalty at z = 0
  ZSpaceTrainer fresh;
  fresh.step(metrics({}, std::vector<double>{0.1, -0.2}));
  const std::vector<double> want{-0.01, 0.01, -0.01, 0.01};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(fresh.state()[i], want[i], 1e-8);
  t.step(metrics({}, std::vector<double>{0.1, -0.2}));
  const double m_hat = 0.1 / (1 - 0.9 * 0.9), v_hat = 0.001 / (1 - 0.999 * 0.999);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(t.state()[i], (i % 2 ? 1 : -1) * 0.01 * m_hat / std::sqrt(v_hat), 1e-8);
  }
  ObservedMetrics dup;
  dup.set("speed", 1.0, "test");
  EXPECT_THROW(dup.set("velocity", 1.0, "test"), ValueError);
  EXPECT_THROW(dup.set("loss", 1.0, "test"), ValueError);
  EXPECT_THROW(dup.set("memory", std::nan(""), "test"), ValueError);
  ZSpaceTrainer::Options exact;
  exact.z_dim = 3;
  exact.gradient_projection = ZSpaceTrainer::GradientProjection::Exact;
  ZSpaceTrainer ex(exact);
  EXPECT_THROW(ex.step(metrics({}, std::vector<double>{1.0, 2.0})), ValueError);
  EXPECT_EQ(ex.state_dict().step, 0);
}

TEST(ZSpace, StepPartialReproducesTheSeedSnippetAndFits) {
  ZSpaceTrainer t;
  const double loss = t.step_partial(
      metrics({{"speed", 0.2}, {"memory", 0.1}, {"stability", 0.9}}, std::vector<double>{0.1, 0.0, 0.0, 0.0}));
  ASSERT_TRUE(t.last_inference());
  EXPECT_NEAR(t.last_inference()->residual, 0.134288, 1e-6);
  EXPECT_NEAR(t.last_inference()->confidence, 0.874339, 1e-6);
  EXPECT_NEAR(loss, 0.271848, 1e-6);

  ZSpaceTrainer::Options o;
  o.z_dim = 6;
  o.lr = 0.05;
  ZSpaceTrainer fit(o);
  const ObservedMetrics target = metrics({{"memory", 0.4}, {"speed", 0.3}});
  fit.step_partial(target);
  const double first = fit.last_inference()->residual;
  for (int i = 0; i < 59; ++i) fit.step_partial(target);
  EXPECT_LT(fit.last_inference()->residual, 0.25 * first);
  EXPECT_THROW(fit.step_partial(target, 1.5), ValueError);
}

TEST(ZSpace, TelemetryLowersConfidence) {
  const NamedValues tele{{"a.variance", 1.0}, {"b.focus", -2.0}};
  EXPECT_NEAR(telemetry_reliability(tele), 0.5 * 0.75, 1e-15);
  const auto inf = infer(std::vector<double>{0.1, 0.2}, 0.35, ObservedMetrics{}, 0.35, tele, "test");
  EXPECT_NEAR(inf.confidence, 0.375, 1e-15);
  EXPECT_TRUE(inf.telemetry.has_value());
}

TEST(ZSpace, TrainerStateDictRoundTripsAndRefusesImpossibleStates) {
  ZSpaceTrainer::Options o;
  o.z_dim = 3;
  ZSpaceTrainer src(o);
  for (int i = 0; i < 3; ++i) src.step(metrics({{"speed", 0.3}}, std::vector<double>{0.2, -0.1, 0.4}));
  const auto state = src.state_dict();
  ZSpaceTrainer dst(o);
  dst.load_state_dict({state.z, state.moment, state.velocity, state.step});
  EXPECT_EQ(dst.state(), src.state());
  EXPECT_EQ(dst.state_dict().step, 3);

  ZSpaceTrainer fresh(o);
  const auto untouched = fresh.state_dict();
  const auto refused = [&](ZSpaceTrainer::StateUpdate bad) {
    EXPECT_THROW(fresh.load_state_dict(bad), CheckpointError);
    EXPECT_EQ(fresh.state_dict().z, untouched.z);
    EXPECT_EQ(fresh.state_dict().velocity, untouched.velocity);
    EXPECT_EQ(fresh.state_dict().step, untouched.step);
  };
  auto neg = state.velocity;
  neg[1] = -1e-3;
  refused({state.z, state.moment, neg, 3});
  refused({std::vector<double>{0.1, 0.2}, state.moment, state.velocity, 3});
  refused({std::vector<double>{0.1, std::numeric_limits<double>::infinity(), 0.0}, state.moment, state.velocity, 3});
  refused({state.z, state.moment, state.velocity, -1});
  refused({std::nullopt, state.moment, state.velocity, 3});
  // Not strict: a missing vector keeps the current one.
  fresh.load_state_dict({std::nullopt, state.moment, state.velocity, std::nullopt}, false);
  EXPECT_EQ(fresh.state(), untouched.z);
  EXPECT_EQ(fresh.state_dict().moment, state.moment);
}

TEST(ZSpace, StepBatchIsSequentialStepsAndAllOrNothing) {
  const std::vector<ObservedMetrics> batch{metrics({{"speed", 0.3}}, std::vector<double>{0.2, -0.1}),
                                           metrics({{"memory", 0.1}}, std::vector<double>{0.5})};
  ZSpaceTrainer one, many;
  const double a = one.step(batch[0]), b = one.step(batch[1]);
  EXPECT_EQ(many.step_batch(batch), (std::vector<double>{a, b}));
  EXPECT_EQ(many.state(), one.state());
  ZSpaceTrainer::Options exact;
  exact.gradient_projection = ZSpaceTrainer::GradientProjection::Exact;
  ZSpaceTrainer ex(exact);
  const std::vector<ObservedMetrics> bad{metrics({}, std::vector<double>{0.1, 0.2, 0.3, 0.4}),
                                         metrics({}, std::vector<double>{0.1})};
  EXPECT_THROW(ex.step_batch(bad), ValueError);
  EXPECT_EQ(ex.state(), std::vector<double>(4, 0.0));
  EXPECT_EQ(ex.state_dict().step, 0);
}

TEST(ZSpace, ComplexTensorArithmeticAndFft) {
  using C = std::complex<double>;
  const ComplexTensor a(1, 2, {C(1, 2), C(3, -1)}), b(1, 2, {C(0.5, 0), C(-1, 1)});
  EXPECT_EQ(add(a, b).data(), (std::vector<C>{C(1.5, 2), C(2, 0)}));
  EXPECT_EQ(sub(a, b).data(), (std::vector<C>{C(0.5, 2), C(4, -2)}));
  EXPECT_EQ(mul(a, b).data(), (std::vector<C>{C(0.5, 1), C(-2, 4)}));
  EXPECT_EQ(a.conj().data(), (std::vector<C>{C(1, -2), C(3, 1)}));
  EXPECT_EQ(a.abs().to_vector<double>(), (std::vector<double>{std::sqrt(5.0), std::sqrt(10.0)}));
  const ComplexTensor col(2, 1, {C(1, 1), C(0, -2)});
  const auto p = matmul(a, col);  // (1, 2) x (2, 1)
  EXPECT_EQ(p.shape(), (std::pair<int64_t, int64_t>{1, 1}));
  EXPECT_NEAR(std::abs(p.data()[0] - (C(1, 2) * C(1, 1) + C(3, -1) * C(0, -2))), 0.0, 1e-15);
  EXPECT_THROW(add(a, col), ShapeError);
  EXPECT_THROW(matmul(a, a), ShapeError);
  for (const int64_t n : {8, 6}) {  // the radix-2 path and the direct sum
    std::vector<C> x(static_cast<size_t>(2 * n));
    for (size_t i = 0; i < x.size(); ++i) x[i] = C(std::sin(0.7 * double(i)), std::cos(1.3 * double(i)) - 0.2);
    const ComplexTensor t(2, n, x);
    const auto X = t.fft();
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t k = 0; k < n; ++k) {
        C want = 0;
        for (int64_t j = 0; j < n; ++j)
          want += x[size_t(r * n + j)] * std::polar(1.0, -2 * M_PI * double(k * j) / double(n));
        EXPECT_NEAR(std::abs(X.data()[size_t(r * n + k)] - want), 0.0, 1e-12);
      }
    }
    const auto back = X.ifft();
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(std::abs(back.data()[i] - x[i]), 0.0, 1e-12);
  }
  // The real DFT helper agrees with the complex FFT on a real row.
  const std::vector<double> real{0.3, -1.0, 2.0, 0.5};
  const auto d = dft(real);
  const auto f = ComplexTensor(1, 4, {C(0.3), C(-1.0), C(2.0), C(0.5)}).fft();
  for (size_t k = 0; k < 4; ++k) EXPECT_NEAR(std::abs(d[k] - f.data()[k]), 0.0, 1e-12);
}

TEST(ZSpace, DesireControlReadsTheGradientStatistics) {
  const GradientSummary same(std::vector<double>{0.4, -0.6, 0.2});
  const DesireGradientInterpretation interp(same, same);
  EXPECT_EQ(interp.balance, 1.0);
  EXPECT_NEAR(interp.stability, 1.0, 1e-5);
  EXPECT_EQ(interp.sign_alignment, 1.0);
  EXPECT_EQ(interp.saturation, 0.6);
  const auto ctl = desire_control(same, same, 1.0);
  const double sat = std::tanh(0.6), scale = 0.4 + 0.9 / (1 + std::exp(-0.9));
  EXPECT_NEAR(ctl.hyper_rate_scale(), (1 - 0.4 * sat) * scale, 1e-5);
  EXPECT_NEAR(ctl.real_rate_scale(), (1 - 0.25 * sat) * scale, 1e-5);
  EXPECT_EQ(ctl.events().back(), "quality_weight");
  const auto strong = desire_control(GradientSummary(std::vector<double>{4.0, -6.0, 2.0}), same);
  EXPECT_NEAR(strong.interpretation().balance, 10.0, 1e-12);
  EXPECT_LT(strong.hyper_rate_scale(), ctl.hyper_rate_scale());
  EXPECT_GT(strong.penalty_gain(), ctl.penalty_gain());
  for (const double gain : {0.0, 0.5, 1.0}) {
    const auto k = desire_control(same, same, gain);
    EXPECT_GE(k.hyper_rate_scale(), 0.1);
    EXPECT_LE(k.real_rate_scale(), 2.0);
  }
}

TEST(ZSpace, AmegagradComposesRsgdThenSgdAndFailsAtomically) {
  const double c = -0.9;
  Amegagrad opt(1, 3, c, 0.03, 0.02);
  Tensor w = Tensor::from_vector(std::vector<double>{0.2, -0.1, 0.05}, {1, 3});
  const Tensor g = Tensor::from_vector(std::vector<double>{0.4, -0.6, 0.2}, {1, 3});
  opt.accumulate_wave(g);
  const auto control = opt.desire_control();
  opt.step(w);
  const double h_lr = 0.03 * control.hyper_rate_scale(), r_lr = 0.02 * control.real_rate_scale();
  EXPECT_NEAR(opt.hyper().learning_rate(), h_lr, 1e-15);
  EXPECT_NEAR(opt.real().learning_rate(), r_lr, 1e-15);
  const Tensor w0 = Tensor::from_vector(std::vector<double>{0.2, -0.1, 0.05}, {1, 3});
  const Tensor want = geometry::clip_to_ball(sub(geometry::rsgd_step(w0, g, c, h_lr), mul(g, r_lr)), c);
  EXPECT_TRUE(allclose(w, want, 1e-12, 1e-15));
  EXPECT_TRUE(opt.hyper().applied() && opt.real().applied());
  EXPECT_EQ(opt.real().gradient(), g.to_vector<double>());
  const auto before = w.to_vector<double>();
  opt.step(w, false);  // nothing pending: nothing moves
  EXPECT_EQ(w.to_vector<double>(), before);

  Amegagrad bad(1, 2, -1.0, 0.05, 1e300);
  Tensor v = Tensor::from_vector(std::vector<double>{0.1, 0.2}, {1, 2});
  bad.accumulate_wave(Tensor::from_vector(std::vector<double>{1e10, 1e10}, {1, 2}));
  const double lr_before = bad.real().learning_rate();
  EXPECT_THROW(bad.step(v), ValueError);
  EXPECT_EQ(v.to_vector<double>(), (std::vector<double>{0.1, 0.2}));
  EXPECT_FALSE(bad.real().applied());
  EXPECT_EQ(bad.real().learning_rate(), lr_before);  // a failed step does not retune either
  EXPECT_FALSE(bad.last_control().has_value());
  EXPECT_THROW(Amegagrad(1, 4, -0.5).absorb_text(LanguageWaveEncoder(-1.0, 0.5), "ab"), ValueError);
  Amegagrad text(1, 3);
  text.absorb_text(LanguageWaveEncoder(-1.0, 0.5), "ab");  // (1, 4) truncated to (1, 3)
  EXPECT_EQ(text.hyper().summary().count(), 3);
}
