// AmegagradSession (model and weights forms, Atlas frames, skipped and refused steps), topos guards
// on the tapes and ZSpaceTrainer, and ComplexTensor's complex64 dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/zspace/complex_tensor.h"
#include "spiraltorch/zspace/session.h"

using namespace st;
using namespace st::zspace;

namespace {

// y = 0.3 x0 - 0.2 x1 on a fixed batch; a Linear(2, 1) in float64 fits it.
std::pair<Tensor, Tensor> regression_batch() {
  const Tensor x = Tensor::from_vector<double>({0.5, -0.2, 0.1, 0.4, -0.3, 0.6, 0.8, 0.1}, {4, 2});
  const Tensor y = Tensor::from_vector<double>({0.19, -0.05, -0.21, 0.22}, {4, 1});
  return {x, y};
}

std::shared_ptr<nn::Linear> small_model() {
  auto m = std::make_shared<nn::Linear>(2, 1);
  m->to(Dtype::Float64);
  NoGradGuard ng;
  Tensor w = m->weight(), b = m->bias();
  copy_(w, Tensor::from_vector<double>({0.05, 0.02}, {1, 2}));
  copy_(b, Tensor::from_vector<double>({0.0}, {1}));
  return m;
}

AmegagradSession::Loss mse() {
  return [](const Tensor& p, const Tensor& t) { return nn::mse_loss(p, t); };
}

}  // namespace

TEST(AmegagradSession, ModelSessionLowersTheLossAndRecordsFrames) {
  auto model = small_model();
  AmegagradSession::Options o;
  // Combined rate 0.4 < 1 (the bias' curvature of the mean squared error is 2: plain GD needs lr < 1).
  o.hyper_learning_rate = 0.3;
  o.real_learning_rate = 0.1;
  o.telemetry_bound = 5;
  AmegagradSession s(*model, mse(), o);
  EXPECT_EQ(s.parameter_names(), (std::vector<std::string>{"weight", "bias"}));
  const auto [x, y] = regression_batch();
  const double first = s.step(x, y).loss;
  double last = first;
  for (int i = 0; i < 40; ++i) last = s.step(x, y, i == 39 ? "done" : "").loss;
  EXPECT_LT(last, 0.2 * first);
  EXPECT_EQ(s.steps(), 41);
  EXPECT_EQ(s.frames().size(), 5u);  // bounded
  const AtlasFrame& f = s.frames().back();
  EXPECT_GT(f.timestamp, 1.6e9);
  for (const char* name : {"session.loss", "session.skipped", "hypergrad.l2", "hypergrad.mean_abs", "hypergrad.linf",
                           "hypergrad.learning_rate", "realgrad.l2", "realgrad.learning_rate",
                           "desire.hyper_rate_scale", "desire.real_rate_scale", "geometry.max_radius", "zspace.loss"}) {
    EXPECT_TRUE(f.metric(name).has_value()) << name;
  }
  EXPECT_EQ(*f.metric("session.skipped"), 0.0);
  EXPECT_EQ(f.notes, std::vector<std::string>{"done"});
  // The frame's loss is the loss before that step's update.
  EXPECT_DOUBLE_EQ(*f.metric("session.loss"), last);
  EXPECT_LT(*f.metric("geometry.max_radius"), 1.0);
}

TEST(AmegagradSession, HyperOnlyStepIsRiemannianSgdOfTheLossGradient) {
  auto model = small_model();
  AmegagradSession::Options o;
  o.hyper_only = true;
  o.hyper_learning_rate = 0.1;
  o.curvature = -0.5;
  o.z_dim = 0;
  AmegagradSession s(*model, mse(), o);
  const auto [x, y] = regression_batch();
  // The expected update, by hand: the loss gradient of the weight, then geometry::rsgd_step.
  auto ref = small_model();
  const Tensor loss = nn::mse_loss((*ref)(x), y);
  loss.backward();
  const Tensor expect = geometry::rsgd_step(ref->weight().detach(), ref->weight().grad(), -0.5, 0.1);
  const SessionStep r = s.step(x, y);
  EXPECT_FALSE(r.frame.metric("realgrad.l2").has_value());
  EXPECT_FALSE(r.frame.metric("zspace.loss").has_value());
  const auto got = model->weight().to_vector<double>(), want = expect.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12);
}

TEST(AmegagradSession, NonFiniteLossSkipsAndChangesNothing) {
  auto model = small_model();
  AmegagradSession s(*model, [](const Tensor& p, const Tensor&) { return mul(sum(p), std::nan("")); }, {});
  const auto before = model->weight().to_vector<double>();
  const auto [x, y] = regression_batch();
  const SessionStep r = s.step(x, y);
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(s.skipped_steps(), 1);
  EXPECT_EQ(*r.frame.metric("session.skipped"), 1.0);
  EXPECT_EQ(r.frame.notes.front(), "skipped: non-finite loss");
  EXPECT_EQ(model->weight().to_vector<double>(), before);
}

TEST(AmegagradSession, RefusedUpdateThrowsAndChangesNothing) {
  auto model = small_model();
  AmegagradSession::Options o;
  o.tune = false;
  o.real_learning_rate = 1e10;  // with a ~1e300 gradient the Euclidean step overflows
  AmegagradSession s(*model, [](const Tensor& p, const Tensor&) { return mul(sum(p), 1e300); }, o);
  const auto before = model->weight().to_vector<double>();
  const auto [x, y] = regression_batch();
  EXPECT_THROW(s.step(x, y), ValueError);
  EXPECT_EQ(model->weight().to_vector<double>(), before);
  EXPECT_EQ(s.steps(), 0);
  EXPECT_TRUE(s.frames().empty());
  EXPECT_THROW(AmegagradSession(*model, mse(),
                                [] {
    AmegagradSession::Options b;
    b.telemetry_bound = -1;
    return b;
  }()),
               ValueError);
  // A non-scalar loss is a shape error.
  AmegagradSession v(*model, [](const Tensor& p, const Tensor&) { return p; }, {});
  EXPECT_THROW(v.step(x, y), ShapeError);
}

TEST(AmegagradSession, WeightsSessionMatchesAmegagrad) {
  AmegagradSession::Options o;
  o.curvature = -0.9;
  o.hyper_learning_rate = 0.03;
  o.real_learning_rate = 0.02;
  const Tensor w0 = Tensor::from_vector<double>({0.2, -0.1, 0.05}, {1, 3});
  AmegagradSession s(1, 3, o, w0.clone());
  const Tensor wave = Tensor::from_vector<double>({0.4, -0.6, 0.2}, {1, 3});
  const SessionStep r = s.step_wave(wave, "wave");
  Amegagrad ref(1, 3, -0.9, 0.03, 0.02);
  Tensor w = w0.clone();
  ref.accumulate_wave(wave);
  ref.step(w);
  EXPECT_EQ(s.weights().to_vector<double>(), w.to_vector<double>());
  EXPECT_TRUE(std::isnan(r.loss));
  EXPECT_FALSE(r.frame.metric("session.loss").has_value());
  EXPECT_NEAR(*r.frame.metric("hypergrad.l2"), std::sqrt(0.16 + 0.36 + 0.04), 1e-12);
  // Model-only calls are refused on a weights session, and the reverse.
  EXPECT_THROW(s.step(wave, wave), ValueError);
  EXPECT_THROW(AmegagradSession(1, 3, o, Tensor::from_vector<double>({1, 2}, {1, 2})), ShapeError);
  auto model = small_model();
  AmegagradSession m(*model, mse(), o);
  EXPECT_THROW(m.step_wave(wave), ValueError);
  EXPECT_THROW(m.weights(), ValueError);
}

TEST(AmegagradSession, FailingWaveLeavesTheTapes) {
  AmegagradSession s(1, 3, {});
  s.accumulate_wave(Tensor::from_vector<double>({1, 2, 3}, {1, 3}));
  const auto pending = s.optimizers()[0].hyper().pending_gradient();
  EXPECT_THROW(s.step_wave(Tensor::from_vector<double>({1, 2}, {1, 2})), ValueError);
  EXPECT_EQ(s.optimizers()[0].hyper().pending_gradient(), pending);
}

TEST(ToposGuard, TapesSaturateEveryAccumulationAndUpdate) {
  const OpenCartesianTopos topos(-1.0, 1e-3, 0.5, 8, 6);
  Hypergrad h(-1.0, 0.1, 2, 3, topos);
  ASSERT_TRUE(h.topos().has_value());
  h.accumulate_wave(Tensor::from_vector<double>({3, -2, 0.1, 0, 1, -0.4}, {2, 3}));
  const std::vector<double> raw{3, -2, 0.1, 0, 1, -0.4};
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_DOUBLE_EQ(h.gradient()[i], topos.saturate(raw[i]));
  // A second accumulation saturates the sum (so the tape stays bounded by the saturation level).
  h.accumulate_wave(Tensor::from_vector<double>({3, -2, 0.1, 0, 1, -0.4}, {2, 3}));
  EXPECT_DOUBLE_EQ(h.gradient()[0], topos.saturate(topos.saturate(3) + 3));
  EXPECT_LT(h.gradient()[0], 0.5 + 1e-3);
  // Volume, curvature and depth checks.
  EXPECT_THROW(Hypergrad(-1.0, 0.1, 3, 3, topos), ShapeError);
  EXPECT_THROW(Hypergrad(-0.5, 0.1, 1, 3, topos), ValueError);
  EXPECT_THROW(Realgrad(0.1, 7, 1, topos), ShapeError);
  const LanguageWaveEncoder enc(-1.0, 0.5);
  Hypergrad text_tape(-1.0, 0.1, 1, 6, topos);
  EXPECT_THROW(text_tape.absorb_text(enc, "abcdefghij"), ValueError);  // 10 characters >= max_depth 8
  // Realgrad: the updated weights pass through the saturation too.
  Realgrad r(1.0, 1, 2, topos);
  r.accumulate_wave(Tensor::from_vector<double>({-5, 0.1}, {1, 2}));
  Tensor w = Tensor::from_vector<double>({0.2, 0.0}, {1, 2});
  r.apply(w);
  const double g0 = topos.saturate(-5.0), g1 = topos.saturate(0.1);
  EXPECT_DOUBLE_EQ(w.to_vector<double>()[0], topos.saturate(0.2 - g0));
  EXPECT_DOUBLE_EQ(w.to_vector<double>()[1], topos.saturate(0.0 - g1));
  // Retune keeps a topos of the new curvature.
  h.retune(-0.5, 0.2);
  EXPECT_DOUBLE_EQ(h.topos()->curvature(), -0.5);
  EXPECT_DOUBLE_EQ(h.topos()->saturation(), 0.5);
}

TEST(ToposGuard, AmegagradAndTrainerAreGuarded) {
  const OpenCartesianTopos topos(-1.0, 1e-3, 0.1, 8, 4);
  Amegagrad a(1, 3, -1.0, 0.5, 0.5, 1.0, topos);
  a.accumulate_wave(Tensor::from_vector<double>({4, -4, 4}, {1, 3}));
  for (const double g : a.real().gradient()) EXPECT_LE(std::abs(g), 0.1 + 1e-3);
  Tensor w = Tensor::from_vector<double>({0.0, 0.0, 0.0}, {1, 3});
  a.step(w);
  for (const double v : w.to_vector<double>()) EXPECT_LE(std::abs(v), 0.1 + 1e-3);
  EXPECT_THROW(Amegagrad(2, 3, -1.0, 0.05, 0.01, 1.0, topos), ShapeError);

  ZSpaceTrainer::Options o;
  o.z_dim = 4;
  o.lr = 10.0;  // big Adam steps: without the guard z would reach about 10 per coordinate
  o.topos = topos;
  ZSpaceTrainer t(o);
  ObservedMetrics m;
  m.set("speed", 0.2, "test");
  m.set_gradient("gradient", {1.0, -1.0, 1.0, -1.0}, "test");
  for (int i = 0; i < 3; ++i) t.step(m);
  for (const double z : t.state()) EXPECT_LE(std::abs(z), 0.1 + 1e-3);
  o.z_dim = 5;
  EXPECT_THROW(ZSpaceTrainer{o}, ShapeError);
  // The guard is idempotent in effect: saturation of a saturated value stays within the level.
  EXPECT_LE(topos.saturate(topos.saturate(50.0)), 0.1 + 1e-3);
}

TEST(ComplexTensor64, RoundsToSinglePrecisionAndPromotesLikeNumPy) {
  const double third = 1.0 / 3.0;
  const ComplexTensor a(1, 2, {{third, -third}, {2.0, 0.5}}, ComplexDtype::Complex64);
  EXPECT_EQ(a.dtype(), ComplexDtype::Complex64);
  EXPECT_EQ(a.data()[0].real(), static_cast<double>(static_cast<float>(third)));
  const ComplexTensor b(1, 2, {{third, 0.0}, {1.0, 1.0}});
  EXPECT_EQ(add(a, b).dtype(), ComplexDtype::Complex128);
  const ComplexTensor p = mul(a, a);
  EXPECT_EQ(p.dtype(), ComplexDtype::Complex64);
  const std::complex<double> exact = a.data()[0] * a.data()[0];
  EXPECT_EQ(p.data()[0].real(), static_cast<double>(static_cast<float>(exact.real())));
  EXPECT_EQ(a.abs().dtype(), Dtype::Float32);
  EXPECT_EQ(b.abs().dtype(), Dtype::Float64);
  EXPECT_EQ(a.conj().dtype(), ComplexDtype::Complex64);
  EXPECT_EQ(a.fft().dtype(), ComplexDtype::Complex64);
  const ComplexTensor back = a.fft().ifft();
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(std::abs(back.data()[i] - a.data()[i]), 0.0, 1e-6);
  EXPECT_EQ(a.to(ComplexDtype::Complex128).dtype(), ComplexDtype::Complex128);
  EXPECT_THROW(matmul(a, a), ShapeError);
}
