// DesirePipeline and its bridges from C++: defaults leave the distribution unchanged, the
// documented score formula, phases, temperature control, bridges, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "spiraltorch/error.h"
#include "spiraltorch/nn/desire.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/train/module_trainer.h"

using namespace st::nn;

namespace {

std::vector<double> softmax(const std::vector<double>& x) {
  double m = x[0], z = 0;
  for (double v : x) m = std::max(m, v);
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) z += out[i] = std::exp(x[i] - m);
  for (double& v : out) v /= z;
  return out;
}

}  // namespace

TEST(Desire, DefaultsLeaveSamplingUnchanged) {
  DesirePipeline p(DesireConfig{.vocab_size = 3});
  const std::vector<double> logits{1.2, -0.4, 0.3};
  const auto q = softmax(logits);
  for (int n = 0; n < 3; ++n) {
    const DesireStep s = p.step(logits, 0, {1.0, 0.0, 0.0});
    for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(s.probabilities[i], q[i], 1e-15);
    EXPECT_EQ(s.temperature, 1.0);
    EXPECT_EQ(s.phase, n == 0 ? "observation" : n == 1 ? "injection" : "integration");
  }
}

TEST(Desire, ScoreFormulaTemperatureAndBridges) {
  DesireConfig c{.vocab_size = 2,
                 .concepts = 2,
                 .alpha_end = 1.0,
                 .gamma = 0.5,
                 .lambda = 0.25,
                 .observation_horizon = 0,
                 .integration_horizon = 1,
                 .target_entropy = 0.1,
                 .eta = 0.5};
  DesirePipeline p(c);
  p.set_transition_prior({0.0, 2.0, 0.0, 0.0});
  p.set_repression({1.0, 0.0});
  auto trainer = std::make_shared<DesireTrainerBridge>();
  auto roundtable = std::make_shared<DesireRoundtableBridge>(1.0, 1.0);
  p.attach_bundle({trainer, roundtable});
  const DesireStep s = p.step({0.0, 0.0}, 0, {2.0, 2.0});
  // log_softmax = -ln 2 each; scores: token 0: -ln2 + 0.5*0.5 - 0.25, token 1: -ln2 + 2 + 0.5*0.5.
  const auto q = softmax({-std::log(2.0) + 0.25 - 0.25, -std::log(2.0) + 2.0 + 0.25});
  EXPECT_NEAR(s.probabilities[0], q[0], 1e-15);
  EXPECT_NEAR(s.logit_offsets[1], 2.25, 1e-15);
  const double H = -(q[0] * std::log(q[0]) + q[1] * std::log(q[1]));
  EXPECT_NEAR(p.temperature(), std::clamp(1.0 + 0.5 * (0.1 - H), 0.4, 1.6), 1e-15);
  EXPECT_EQ(trainer->size(), 1u);
  const auto im = roundtable->impulse();
  ASSERT_TRUE(im.has_value());
  EXPECT_NEAR(im->above, std::clamp(1.0 + (1.0 / 1.5 - 1.0 / 3.0), 0.35, 1.65), 1e-15);
  EXPECT_NEAR(im->drift, std::tanh(0.25), 1e-15);
  EXPECT_EQ(trainer->drain_summary()->at("injection"), 1.0);  // step 0 < integration_horizon
  EXPECT_FALSE(trainer->drain_summary().has_value());
}

TEST(Desire, ErrorsChangeNothing) {
  DesirePipeline p(DesireConfig{.vocab_size = 2});
  EXPECT_THROW(p.step({1.0}, 0), st::ValueError);
  EXPECT_THROW(p.step({1.0, NAN}, 0), st::ValueError);
  EXPECT_THROW(p.step({1.0, 0.0}, 2), st::ValueError);
  EXPECT_THROW(p.step({1.0, 0.0}, 0, {0.0, 0.0, 0.0}), st::ValueError);
  EXPECT_EQ(p.steps_taken(), 0);
  EXPECT_THROW(DesirePipeline(DesireConfig{.vocab_size = 0}), st::ValueError);
  EXPECT_THROW(p.set_transition_prior({1.0}), st::ValueError);
}

TEST(Desire, ModuleTrainerUsesTheImpulseAndDrainsTheSummary) {
  auto run = [](std::optional<DesireTelemetryBundle> bundle) {
    st::train::ModuleTrainer trainer("cpu", -1.0, 1e-2, 1e-1);
    const auto schedule = trainer.roundtable(4, 1, st::train::RoundtableConfig{1, 1, 1, 1e-5});
    st::manual_seed(0);
    st::nn::Linear model(3, 1);
    if (bundle) trainer.enable_desire_telemetry(*bundle);
    const st::Tensor x = st::rand({4, 3}), y = st::rand({4, 1});
    bool given = false;
    const auto stats = trainer.train_epoch(model, [](const st::Tensor& p, const st::Tensor& t) {
      return st::mean(st::square(st::sub(p, t)));
    }, [&](st::Tensor& xi, st::Tensor& yi) {
      if (given) return false;
      xi = x, yi = y, given = true;
      return true;
    }, schedule);
    return std::make_pair(stats, model.weight().to_vector<float>());
  };
  const auto [plain_stats, plain] = run(std::nullopt);
  DesireTelemetryBundle bundle{std::make_shared<DesireTrainerBridge>(), std::make_shared<DesireRoundtableBridge>(1.0)};
  DesirePipeline pipe(DesireConfig{.vocab_size = 2, .alpha_end = 1.0});
  pipe.attach_bundle(bundle);
  pipe.step({0.0, 1.0}, 0);
  const auto [stats, weights] = run(bundle);
  EXPECT_NEAR(stats.desire_multipliers[0], 1.65, 1e-12);
  EXPECT_NEAR(stats.desire_multipliers[1], 2.0 / 3.0, 1e-12);
  ASSERT_TRUE(stats.desire_summary.has_value());
  EXPECT_EQ(stats.desire_summary->at("total"), 1.0);
  EXPECT_FALSE(plain_stats.desire_summary.has_value());
  EXPECT_NE(weights, plain);
}
