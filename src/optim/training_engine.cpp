#include "spiraltorch/optim/training_engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>

#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

namespace {

std::atomic<training_observer::Observer> g_observer{nullptr};

void announce(const char* event, const StepReport* step, const EpochReport* epoch) {
  if (const auto observer = g_observer.load(std::memory_order_relaxed)) observer(event, step, epoch);
}

std::optional<double> find(const NamedValues& values, const std::string& name) {
  for (const auto& [k, v] : values) {
    if (k == name) return v;
  }
  return std::nullopt;
}

void accumulate(NamedValues& sums, const NamedValues& values) {
  for (const auto& [name, v] : values) {
    auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& s) { return s.first == name; });
    if (it == sums.end()) {
      sums.emplace_back(name, v);
    } else {
      it->second += v;
    }
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// True when every defined gradient of params is finite.
bool gradients_finite(const std::vector<Tensor>& params) {
  NoGradGuard ng;
  for (const Tensor& p : params) {
    const Tensor g = p.grad();
    if (g.defined() && g.numel() > 0 && all(isfinite(g)).item() == 0.0) return false;
  }
  return true;
}

}  // namespace

bool gate_gradients(const std::vector<Tensor>& params, std::optional<double> max_norm) {
  // clip_grad_norm_ leaves non-finite gradients alone and reports a non-finite norm.
  if (max_norm) return std::isfinite(clip_grad_norm_(params, *max_norm).item());
  return gradients_finite(params);
}

namespace {

// Sets a flag for the length of a scope (the engine's "inside an epoch" / "inside fit" state).
class FlagScope {
 public:
  explicit FlagScope(bool& flag) : flag_(flag), before_(flag) { flag_ = true; }
  ~FlagScope() { flag_ = before_; }
  FlagScope(const FlagScope&) = delete;
  FlagScope& operator=(const FlagScope&) = delete;

 private:
  bool& flag_;
  bool before_;
};

}  // namespace

training_observer::Observer training_observer::install(Observer observer) noexcept {
  return g_observer.exchange(observer);
}

training_observer::Observer training_observer::current() noexcept { return g_observer.load(std::memory_order_relaxed); }

std::optional<double> StepReport::metric(const std::string& name) const { return find(metrics, name); }

std::optional<double> EpochReport::metric_sum(const std::string& name) const { return find(metric_sums, name); }

EarlyStopping::EarlyStopping(int64_t patience, double min_delta, Monitor monitor)
    : patience_(patience),
      min_delta_(std::max(0.0, min_delta)),
      monitor_(monitor),
      best_(std::numeric_limits<double>::infinity()) {
  if (patience < 0 || !std::isfinite(min_delta)) {
    throw ValueError("EarlyStopping: patience must be >= 0 and min_delta finite, got patience " +
                     std::to_string(patience) + " and min_delta " + std::to_string(min_delta));
  }
}

double EarlyStopping::value_of(const EpochReport& epoch) const {
  return monitor_ == Monitor::ValLoss && epoch.val_loss ? *epoch.val_loss : epoch.average_loss;
}

bool EarlyStopping::observe(double value) {
  if (value + min_delta_ < best_) {
    best_ = value;
    stale_ = 0;
  } else {
    ++stale_;
  }
  return stale_ > patience_;
}

TrainingEngine::TrainingEngine(Options options) : opt_(std::move(options)) {
  if (opt_.max_grad_norm && !(*opt_.max_grad_norm > 0 && std::isfinite(*opt_.max_grad_norm))) {
    throw ValueError(opt_.source + ": max_grad_norm must be positive and finite, got " +
                     std::to_string(*opt_.max_grad_norm));
  }
}

StepReport TrainingEngine::step(const StepParts& parts, Tensor input, Tensor target) {
  if (!parts.update) throw ValueError(opt_.source + ": the training step has no update");
  // A step that throws is not counted (the parts leave everything unchanged when they throw).
  try {
    return run_step(parts, std::move(input), std::move(target));
  } catch (...) {
    --steps_;
    throw;
  }
}

StepReport TrainingEngine::run_step(const StepParts& parts, Tensor input, Tensor target) {
  StepReport r;
  r.source = opt_.source;
  r.epoch = in_epoch_ ? epoch_ : 0;
  r.step = ++steps_;
  if (parts.place) parts.place(input, target);
  // An input the front-end carries itself (undefined here) counts by its target.
  const Tensor& counted = input.defined() ? input : target;
  r.samples = counted.defined() && counted.dim() > 0 ? counted.shape()[0] : 1;
  if (parts.zero_grad) parts.zero_grad();
  const auto skip = [&r](const char* reason) {
    r.skipped = true;
    r.skip_reason = reason;
  };
  if (parts.loss) {
    const Tensor prediction = parts.forward ? parts.forward(input) : input;
    const Tensor loss = parts.loss(prediction, target);
    if (!loss.defined() || loss.numel() != 1) {
      throw ShapeError(opt_.source + ": the loss must hold one value, got shape " +
                       (loss.defined() ? shape_str(loss.shape()) : std::string("(undefined)")));
    }
    r.loss = loss.detach().item();
    if (!std::isfinite(r.loss)) {
      skip("non-finite loss");
    } else if (parts.backward) {
      parts.backward(loss, prediction, r);
    } else {
      loss.backward();
    }
  } else {
    r.loss = std::numeric_limits<double>::quiet_NaN();
  }
  if (!r.skipped && (opt_.check_gradients || opt_.max_grad_norm) &&
      !gate_gradients(parts.parameters, opt_.max_grad_norm)) {
    skip("non-finite gradient");
  }
  if (!r.skipped) {
    if (!parts.update(r)) {
      skip("update refused");
    } else if (opt_.scheduler_per_step && opt_.scheduler_step) {
      opt_.scheduler_step();
    }
  }
  if (opt_.zero_grad_after_step && parts.zero_grad) parts.zero_grad();
  if (parts.observe) parts.observe(r);
  for (const auto& cb : opt_.on_step) cb(r);
  announce("TrainerStep", &r, nullptr);
  return r;
}

EpochReport TrainingEngine::train_epoch(const StepParts& parts, const BatchSource& batches) {
  const auto start = std::chrono::steady_clock::now();
  EpochReport e;
  e.source = opt_.source;
  e.epoch = ++epoch_;
  const FlagScope scope(in_epoch_);
  if (parts.set_training) parts.set_training(true);
  if (opt_.on_epoch_start) opt_.on_epoch_start(e.epoch);
  announce("EpochStart", nullptr, &e);
  Tensor x, y;
  while (batches(x, y)) {
    const StepReport r = step(parts, x, y);
    e.samples += r.samples;
    if (r.skipped) {
      ++e.skipped_steps;
    } else {
      ++e.batches;
      if (std::isfinite(r.loss)) e.total_loss += r.loss;
    }
    accumulate(e.metric_sums, r.metrics);
  }
  if (!opt_.scheduler_per_step && opt_.scheduler_step) opt_.scheduler_step();
  e.average_loss = e.batches ? e.total_loss / static_cast<double>(e.batches) : std::numeric_limits<double>::quiet_NaN();
  e.seconds = seconds_since(start);
  if (!in_fit_) finish_epoch(e);
  return e;
}

bool TrainingEngine::finish_epoch(const EpochReport& e) {
  bool stop = false;
  for (const auto& cb : opt_.on_epoch_end) stop = cb(e) || stop;
  announce("EpochEnd", nullptr, &e);
  return stop;
}

EpochReport TrainingEngine::evaluate(const StepParts& parts, const BatchSource& batches) {
  if (!parts.loss) throw ValueError(opt_.source + ": evaluation needs a loss");
  const auto start = std::chrono::steady_clock::now();
  EpochReport e;
  e.source = opt_.source;
  e.epoch = epoch_;
  const bool was_training = parts.set_training ? parts.set_training(false) : false;
  const auto restore = [&] {
    if (parts.set_training) parts.set_training(was_training);
  };
  int64_t correct = 0, seen = 0;
  try {
    NoGradGuard ng;
    Tensor x, y;
    while (batches(x, y)) {
      if (parts.place) parts.place(x, y);
      const Tensor prediction = parts.forward ? parts.forward(x) : x;
      e.total_loss += parts.loss(prediction, y).item();
      ++e.batches;
      e.samples += x.defined() && x.dim() > 0 ? x.shape()[0] : 1;
      if (y.defined() && y.dtype() == Dtype::Int64 && prediction.dim() == 2 && y.dim() == 1) {
        correct += static_cast<int64_t>(sum(eq(argmax(prediction, 1), y)).item());
        seen += y.shape()[0];
      }
    }
  } catch (...) {
    restore();
    throw;
  }
  restore();
  e.average_loss = e.batches ? e.total_loss / static_cast<double>(e.batches) : std::numeric_limits<double>::quiet_NaN();
  if (seen) e.accuracy = static_cast<double>(correct) / static_cast<double>(seen);
  e.seconds = seconds_since(start);
  return e;
}

TrainingEngine::FitReport TrainingEngine::fit(const StepParts& parts, int64_t epochs,
                                              const std::function<BatchSource()>& batches,
                                              const std::function<BatchSource()>& validation) {
  if (epochs < 1) throw ValueError(opt_.source + ": epochs must be >= 1, got " + std::to_string(epochs));
  FitReport out;
  const FlagScope scope(in_fit_);
  for (int64_t i = 0; i < epochs; ++i) {
    EpochReport e = train_epoch(parts, batches());
    if (validation) {
      const EpochReport v = evaluate(parts, validation());
      if (v.batches) e.val_loss = v.average_loss;
      e.val_accuracy = v.accuracy;
    }
    e.score = e.val_loss ? *e.val_loss : e.average_loss;
    if (std::isfinite(e.score) && (!out.best_score || e.score < *out.best_score)) {
      out.best_score = e.score;
      out.best_epoch = e.epoch;
      e.improved = true;
    }
    bool stop = finish_epoch(e);
    if (opt_.early_stopping && opt_.early_stopping->observe(e)) stop = true;
    out.epochs.push_back(std::move(e));
    if (stop) {
      out.stopped_early = true;
      break;
    }
  }
  return out;
}

}  // namespace st::optim
