// The training engine: one step equals a hand-written step in float64, skipped and refused steps
// change nothing, clipping, epochs with callbacks, fit with validation and early stopping, the
// observer slot, and the front-ends (ModuleTrainer, AmegagradSession, ZSpaceTrainer) running on it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/optim/sgd.h"
#include "spiraltorch/optim/training_engine.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/train/module_trainer.h"
#include "spiraltorch/zspace/session.h"
#include "spiraltorch/zspace/trainer.h"

using namespace st;
using optim::EpochReport;
using optim::StepParts;
using optim::StepReport;
using optim::TrainingEngine;

namespace {

// y = 0.3 x0 - 0.2 x1 + 0.1 on a fixed batch: a Linear(2, 1) in float64 fits it.
std::pair<Tensor, Tensor> regression_batch() {
  const Tensor x = Tensor::from_vector<double>({0.5, -0.2, 0.1, 0.4, -0.3, 0.6, 0.8, 0.1}, {4, 2});
  const Tensor y = Tensor::from_vector<double>({0.29, 0.05, -0.11, 0.32}, {4, 1});
  return {x, y};
}

std::shared_ptr<nn::Linear> linear64(double w0, double w1) {
  auto m = std::make_shared<nn::Linear>(2, 1);
  m->to(Dtype::Float64);
  NoGradGuard ng;
  Tensor w = m->weight(), b = m->bias();
  copy_(w, Tensor::from_vector<double>({w0, w1}, {1, 2}));
  copy_(b, Tensor::from_vector<double>({0.0}, {1}));
  return m;
}

Tensor mse(const Tensor& p, const Tensor& t) { return nn::mse_loss(p, t); }

// Module + SGD parts, the way nn.fit builds them.
StepParts sgd_parts(nn::Module& model, optim::Optimizer& opt) {
  StepParts parts;
  parts.zero_grad = [&opt] { opt.zero_grad(); };
  parts.forward = [&model](const Tensor& x) { return model(x); };
  parts.loss = mse;
  parts.update = [&opt](StepReport&) { return static_cast<bool>(opt.step()); };
  parts.parameters = model.parameters();
  parts.set_training = [&model](bool training) {
    const bool was = model.is_training();
    model.train(training);
    return was;
  };
  return parts;
}

// n passes of the same batch.
TrainingEngine::BatchSource repeat(const Tensor& x, const Tensor& y, int n) {
  auto left = std::make_shared<int>(n);
  return [=](Tensor& xi, Tensor& yi) {
    if (*left == 0) return false;
    --*left;
    xi = x, yi = y;
    return true;
  };
}

std::vector<double> values(const Tensor& t) { return t.detach().to_vector<double>(); }

}  // namespace

TEST(TrainingEngine, StepEqualsAHandWrittenStepInFloat64) {
  auto model = linear64(0.05, 0.02);
  auto hand = linear64(0.05, 0.02);
  optim::SGD opt({{model->parameters(), {}}}, 0.1), hand_opt({{hand->parameters(), {}}}, 0.1);
  TrainingEngine engine;
  const StepParts parts = sgd_parts(*model, opt);
  const auto [x, y] = regression_batch();
  double first = 0, last = 0;
  for (int i = 0; i < 20; ++i) {
    const auto w = values(model->weight());
    const StepReport r = engine.step(parts, x, y);
    // The hand-written loop: zero, forward, loss, backward, step.
    hand_opt.zero_grad();
    const Tensor l = mse((*hand)(x), y);
    l.backward();
    const auto g = values(hand->weight().grad());
    hand_opt.step();
    EXPECT_EQ(r.step, i + 1);
    EXPECT_FALSE(r.skipped);
    EXPECT_EQ(r.samples, 4);
    EXPECT_EQ(r.loss, l.item());
    EXPECT_EQ(values(model->weight()), values(hand->weight()));
    EXPECT_EQ(values(model->bias()), values(hand->bias()));
    // and that is plain SGD: w - lr g.
    for (size_t k = 0; k < 2; ++k) EXPECT_NEAR(values(model->weight())[k], w[k] - 0.1 * g[k], 1e-15);
    if (i == 0) first = r.loss;
    last = r.loss;
  }
  EXPECT_LT(last, 0.5 * first);
  EXPECT_EQ(engine.steps(), 20);
}

TEST(TrainingEngine, NonFiniteLossAndGradientSkipAndChangeNothing) {
  auto model = linear64(0.05, 0.02);
  optim::SGD opt({{model->parameters(), {}}}, 0.1);
  TrainingEngine::Options o;
  o.check_gradients = true;
  TrainingEngine engine(o);
  StepParts parts = sgd_parts(*model, opt);
  const auto [x, y] = regression_batch();
  const auto before = values(model->weight());
  parts.loss = [](const Tensor& p, const Tensor&) { return mul(sum(p), std::numeric_limits<double>::quiet_NaN()); };
  StepReport r = engine.step(parts, x, y);
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.skip_reason, "non-finite loss");
  // A finite loss (0) whose gradient is not: d sqrt(u)/du at u = 0.
  parts.loss = [](const Tensor& p, const Tensor&) { return sum(sqrt(sub(p, p.detach()))); };
  r = engine.step(parts, x, y);
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.skip_reason, "non-finite gradient");
  parts.loss = mse;
  parts.update = [](StepReport&) { return false; };
  r = engine.step(parts, x, y);
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.skip_reason, "update refused");
  EXPECT_EQ(values(model->weight()), before);
  EXPECT_EQ(engine.steps(), 3);
  // A step that throws is not counted.
  parts.update = [](StepReport&) -> bool { throw ValueError("refused"); };
  EXPECT_THROW(engine.step(parts, x, y), ValueError);
  EXPECT_EQ(engine.steps(), 3);
  parts.loss = [](const Tensor& p, const Tensor&) { return p; };
  EXPECT_THROW(engine.step(parts, x, y), ShapeError);
  EXPECT_THROW(engine.step(StepParts{}), ValueError);  // no update
}

TEST(TrainingEngine, ClipsTheJointGradientNorm) {
  auto model = linear64(3.0, -2.0);
  TrainingEngine::Options o;
  o.max_grad_norm = 0.01;
  TrainingEngine engine(o);
  StepParts parts;
  parts.zero_grad = [&] { model->zero_grad(); };
  parts.forward = [&](const Tensor& x) { return (*model)(x); };
  parts.loss = mse;
  parts.parameters = model->parameters();
  double norm = 0;
  parts.update = [&](StepReport&) {
    norm = 0;
    for (const Tensor& p : model->parameters()) norm += sum(square(p.grad())).item();
    norm = std::sqrt(norm);
    return true;
  };
  const auto [x, y] = regression_batch();
  engine.step(parts, x, y);
  EXPECT_NEAR(norm, 0.01, 1e-8);
  EXPECT_THROW(TrainingEngine([] {
    TrainingEngine::Options bad;
    bad.max_grad_norm = -1.0;
    return bad;
  }()),
               ValueError);
}

TEST(TrainingEngine, EpochsAccumulateAndCallBack) {
  auto model = linear64(0.05, 0.02);
  optim::SGD opt({{model->parameters(), {}}}, 0.1);
  std::vector<StepReport> steps;
  std::vector<int64_t> started;
  int scheduled = 0;
  TrainingEngine::Options o;
  o.source = "test";
  o.on_step.push_back([&](const StepReport& r) { steps.push_back(r); });
  o.on_epoch_start = [&](int64_t e) { started.push_back(e); };
  o.scheduler_step = [&] { ++scheduled; };
  TrainingEngine engine(o);
  StepParts parts = sgd_parts(*model, opt);
  int calls = 0;
  parts.backward = [&](const Tensor& l, const Tensor&, StepReport& r) {
    l.backward();
    r.metrics.emplace_back("calls", ++calls);
  };
  const auto [x, y] = regression_batch();
  const EpochReport a = engine.train_epoch(parts, repeat(x, y, 3));
  const EpochReport b = engine.train_epoch(parts, repeat(x, y, 2));
  EXPECT_EQ(a.epoch, 1);
  EXPECT_EQ(b.epoch, 2);
  EXPECT_EQ(a.batches, 3);
  EXPECT_EQ(a.samples, 12);
  EXPECT_EQ(*a.metric_sum("calls"), 1 + 2 + 3);
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_EQ(steps[4].epoch, 2);
  EXPECT_EQ(steps[4].step, 5);
  EXPECT_EQ(steps[4].source, "test");
  EXPECT_DOUBLE_EQ(a.total_loss, steps[0].loss + steps[1].loss + steps[2].loss);
  EXPECT_DOUBLE_EQ(a.average_loss, a.total_loss / 3);
  EXPECT_EQ(started, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(scheduled, 2);  // once per epoch
  EXPECT_LT(b.average_loss, a.average_loss);
  // Per step: after every update, not after a skipped step.
  engine.options().scheduler_per_step = true;
  scheduled = 0;
  engine.train_epoch(parts, repeat(x, y, 2));
  parts.update = [](StepReport&) { return false; };
  engine.train_epoch(parts, repeat(x, y, 1));
  EXPECT_EQ(scheduled, 2);
}

TEST(TrainingEngine, FitValidatesTracksTheBestAndStopsEarly) {
  auto model = linear64(0.05, 0.02);
  optim::SGD opt({{model->parameters(), {}}}, 0.1);
  TrainingEngine::Options o;
  o.early_stopping = optim::EarlyStopping(1, 0.0, optim::EarlyStopping::Monitor::ValLoss);
  std::vector<EpochReport> ends;
  o.on_epoch_end.push_back([&](const EpochReport& e) {
    ends.push_back(e);
    return false;
  });
  TrainingEngine engine(o);
  const auto [x, y] = regression_batch();
  // Validation on a fixed batch the model never trains on improves, so fit runs all epochs.
  const auto report = engine.fit(sgd_parts(*model, opt), 6, [&, x = x, y = y] { return repeat(x, y, 2); },
                                 [&, x = x, y = y] { return repeat(x, y, 1); });
  ASSERT_EQ(report.epochs.size(), 6u);
  EXPECT_FALSE(report.stopped_early);
  EXPECT_EQ(*report.best_epoch, 6);
  EXPECT_EQ(ends.size(), 6u);
  for (const EpochReport& e : report.epochs) {
    ASSERT_TRUE(e.val_loss.has_value());
    EXPECT_TRUE(e.improved);
    EXPECT_EQ(e.score, *e.val_loss);
  }
  EXPECT_FALSE(report.epochs[0].val_accuracy.has_value());  // float targets: no accuracy
  // A model that cannot improve (update refused) stops after patience + 1 stale epochs.
  StepParts frozen = sgd_parts(*model, opt);
  frozen.update = [](StepReport&) { return true; };
  TrainingEngine stuck(o);
  const auto stopped = stuck.fit(frozen, 10, [&, x = x, y = y] { return repeat(x, y, 1); },
                                 [&, x = x, y = y] { return repeat(x, y, 1); });
  EXPECT_TRUE(stopped.stopped_early);
  EXPECT_EQ(stopped.epochs.size(), 3u);  // best at 1, stale at 2 and 3
  EXPECT_EQ(*stopped.best_epoch, 1);
  EXPECT_THROW(stuck.fit(frozen, 0, [&, x = x, y = y] { return repeat(x, y, 1); }), ValueError);
}

TEST(TrainingEngine, EvaluateCountsAccuracyInEvalMode) {
  auto model = std::make_shared<nn::Linear>(2, 2);
  model->to(Dtype::Float64);
  {
    NoGradGuard ng;
    Tensor w = model->weight(), b = model->bias();
    copy_(w, Tensor::from_vector<double>({1, 0, 0, 1}, {2, 2}));
    copy_(b, Tensor::from_vector<double>({0, 0}, {2}));
  }
  const Tensor x = Tensor::from_vector<double>({1, 0, 0, 1, 2, 1, 0, 3}, {4, 2});
  const Tensor y = Tensor::from_vector<int64_t>({0, 1, 1, 1}, {4});  // the third is wrong
  TrainingEngine engine;
  StepParts parts;
  parts.forward = [&](const Tensor& xi) {
    EXPECT_FALSE(model->is_training());
    return (*model)(xi);
  };
  parts.loss = [](const Tensor& p, const Tensor& t) { return nn::cross_entropy(p, t); };
  parts.set_training = [&](bool t) {
    const bool was = model->is_training();
    model->train(t);
    return was;
  };
  const EpochReport e = engine.evaluate(parts, repeat(x, y, 2));
  EXPECT_EQ(e.batches, 2);
  EXPECT_DOUBLE_EQ(*e.accuracy, 0.75);
  EXPECT_TRUE(model->is_training());
  EXPECT_DOUBLE_EQ(e.average_loss, nn::cross_entropy((*model)(x), y).item());
}

TEST(TrainingEngine, EarlyStoppingPolicy) {
  optim::EarlyStopping s(2, 0.1);
  EXPECT_FALSE(s.observe(1.0));
  EXPECT_FALSE(s.observe(0.95));  // not better by more than min_delta: stale 1
  EXPECT_FALSE(s.observe(0.92));  // stale 2 = patience
  EXPECT_TRUE(s.observe(0.91));   // stale 3 > patience
  EXPECT_EQ(s.best(), 1.0);
  EXPECT_THROW(optim::EarlyStopping(-1), ValueError);
  EXPECT_THROW(optim::EarlyStopping(1, NAN), ValueError);
}

namespace {
std::vector<std::string>* g_seen = nullptr;
void record(const char* event, const StepReport* step, const EpochReport* epoch) {
  if (g_seen) g_seen->push_back(std::string(event) + ":" + (step ? step->source : epoch->source));
}
}  // namespace

// Every front-end's steps are engine steps: the observer slot sees each with its source.
TEST(TrainingEngine, FrontEndsRunOnTheEngine) {
  std::vector<std::string> seen;
  g_seen = &seen;
  const auto previous = optim::training_observer::install(&record);
  struct Restore {
    optim::training_observer::Observer previous;
    ~Restore() {
      optim::training_observer::install(previous);
      g_seen = nullptr;
    }
  } restore{previous};
  const auto [x, y] = regression_batch();

  train::ModuleTrainer trainer("cpu", -1.0, 1e-2, 1e-1);
  auto m = linear64(0.05, 0.02);
  const auto stats = trainer.train_epoch(*m, mse, repeat(x, y, 2), trainer.roundtable(4, 1, {1, 1, 1, 1e-5}));
  EXPECT_EQ(trainer.engine().steps(), 2);
  EXPECT_EQ(stats.batches, 2);

  auto sm = linear64(0.05, 0.02);
  zspace::AmegagradSession::Options so;
  so.z_dim = 0;
  zspace::AmegagradSession session(*sm, mse, so);
  const auto s1 = session.step(x, y);
  EXPECT_EQ(session.engine().steps(), 1);
  EXPECT_EQ(s1.step, 1);
  so.hyper_only = true;
  zspace::AmegagradSession hyper(*sm, mse, so);
  hyper.step(x, y);

  zspace::ZSpaceTrainer z;
  zspace::ObservedMetrics metrics;
  metrics.set("speed", 0.2, "test");
  const double objective = z.step(metrics);
  EXPECT_EQ(z.engine().steps(), 1);
  EXPECT_TRUE(std::isfinite(objective));

  const std::vector<std::string> want = {"EpochStart:ModuleTrainer",     "TrainerStep:ModuleTrainer",
                                         "TrainerStep:ModuleTrainer",    "EpochEnd:ModuleTrainer",
                                         "TrainerStep:AmegagradSession", "TrainerStep:HypergradSession",
                                         "TrainerStep:ZSpaceTrainer"};
  EXPECT_EQ(seen, want);
}
