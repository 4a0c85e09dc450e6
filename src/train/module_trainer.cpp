#include "spiraltorch/train/module_trainer.h"

#include <chrono>
#include <cmath>

#include "spiraltorch/autograd.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/runtime/events.h"
#include "spiraltorch/wgpu.h"
#include "spiraltorch/zspace/module_hypergrad.h"

namespace st::train {

namespace {
// Gradient norms are summed in float64 where the device has it.
Dtype reduction_dtype(const Tensor& g) { return g.device().has_float64() ? Dtype::Float64 : Dtype::Float32; }

// The TrainerStep event of one batch (see module_trainer.h); energy and lr_scale only when known.
void publish_step(int64_t epoch, int64_t step, const Tensor& x, double loss, bool skipped,
                  const std::array<double, 3>* energy, double lr_scale) {
  if (!events::has_listeners(ModuleTrainer::kStepEvent)) return;
  events::Event e;
  e.type = ModuleTrainer::kStepEvent;
  e.fields = {{"epoch", epoch},
              {"step", step},
              {"samples", x.dim() > 0 ? x.shape()[0] : int64_t{1}},
              {"loss", loss},
              {"skipped", skipped}};
  if (energy) {
    e.fields.emplace_back("band_above", (*energy)[0]);
    e.fields.emplace_back("band_here", (*energy)[1]);
    e.fields.emplace_back("band_beneath", (*energy)[2]);
    e.fields.emplace_back("lr_scale", lr_scale);
  }
  events::publish(std::move(e));
}

void check_rate(double v, const char* what) {
  if (!(v > 0) || !std::isfinite(v)) {
    throw ValueError(std::string("ModuleTrainer: ") + what + " must be positive and finite, got " + std::to_string(v));
  }
}
}  // namespace

ModuleTrainer::ModuleTrainer(std::string backend, double curvature, double hyper_lr, double fallback_lr)
    : requested_(std::move(backend)), curvature_(curvature), hyper_lr_(hyper_lr), fallback_lr_(fallback_lr) {
  if (!(curvature < 0) || !std::isfinite(curvature)) {
    throw ValueError("ModuleTrainer: curvature must be negative and finite, got " + std::to_string(curvature));
  }
  check_rate(hyper_lr, "hyper_learning_rate");
  check_rate(fallback_lr, "fallback_learning_rate");
  if (requested_ == "cpu" || requested_ == "auto") {
    effective_ = "cpu";
  } else if (requested_ == "cuda" || requested_.starts_with("cuda:")) {
    if (!cuda::is_available()) {
      throw DeviceUnavailableError("ModuleTrainer: backend '" + requested_ +
                                   "' is not available: " + cuda::unavailable_reason());
    }
    device_ = Device::parse(requested_);
    if (device_.index < 0) device_.index = 0;
    if (device_.index >= cuda::device_count()) {
      throw DeviceUnavailableError("ModuleTrainer: backend '" + requested_ + "' names device " +
                                   std::to_string(device_.index) + " of " + std::to_string(cuda::device_count()));
    }
    effective_ = device_.str();
  } else if (requested_ == "wgpu") {
    if (!wgpu::is_available()) {
      throw DeviceUnavailableError("ModuleTrainer: backend 'wgpu' is not available: " + wgpu::unavailable_reason());
    }
    device_ = Device(DeviceType::WGPU, 0);
    effective_ = "wgpu";
  } else if (requested_ == "hip" || requested_ == "mps") {
    throw DeviceUnavailableError("ModuleTrainer: backend '" + requested_ + "' is not available in this build");
  } else {
    throw ValueError("ModuleTrainer: unknown backend '" + requested_ + "'");
  }
}

void ModuleTrainer::to_backend(Tensor& x, Tensor& y) const {
  if (x.defined() && x.device() != device_) x = to_device(x, device_);
  if (y.defined() && y.device() != device_) y = to_device(y, device_);
}

RoundtableSchedule ModuleTrainer::roundtable(int64_t rows, int64_t cols, RoundtableConfig config) const {
  return RoundtableSchedule(rows, cols, config);
}

void ModuleTrainer::prepare(nn::Module& module) const { zspace::attach_hypergrad(module, curvature_, hyper_lr_); }

void ModuleTrainer::zero(nn::Module& module) const { module.zero_grad(); }

void ModuleTrainer::enable_realgrad(double lr) {
  if (!(lr > 0) || !std::isfinite(lr)) throw ValueError("real_learning_rate must be positive and finite");
  real_lr_ = lr;
}

void ModuleTrainer::set_grad_clip_max_norm(double max_norm) {
  if (!(max_norm > 0) || !std::isfinite(max_norm)) throw ValueError("grad_clip_max_norm must be positive and finite");
  clip_ = max_norm;
}

void ModuleTrainer::enable_curvature_scheduler(CurvatureScheduler scheduler) {
  scheduler.sync(curvature_);
  scheduler_ = std::move(scheduler);
}

void ModuleTrainer::mul_learning_rate(nn::Module& module, double factor) {
  check_rate(factor, "learning-rate factor");
  hyper_lr_ *= factor;
  fallback_lr_ *= factor;
  if (real_lr_) *real_lr_ *= factor;
  // Each module's own rate, once (attach_hypergrad would also rewrite its children).
  for (auto& [key, m] : module.named_modules()) {
    if (const auto h = zspace::hypergrad_of(*m))
      zspace::set_own_hypergrad(*m, zspace::HypergradSettings{h->curvature, h->learning_rate * factor});
  }
}

bool ModuleTrainer::step(nn::Module& module) {
  NoGradGuard ng;
  const auto params = zspace::parameters_with_hypergrad(module);
  // Compute every update first; commit only if all are finite.
  double sq = 0.0;
  for (const auto& [p, h] : params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    const double s = sum(square(g.to(reduction_dtype(g)))).item();
    if (!std::isfinite(s)) return false;
    sq += s;
  }
  const double scale = clip_ && std::sqrt(sq) > *clip_ ? *clip_ / (std::sqrt(sq) + 1e-12) : 1.0;
  std::vector<std::pair<Tensor, Tensor>> updates;
  for (const auto& [p, h] : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (scale != 1.0) g = mul(g, scale);
    Tensor next;
    if (h) {
      next = geometry::rsgd_step(p, g, h->curvature, h->learning_rate * lr_scale_);
      if (real_lr_) next = geometry::clip_to_ball(sub(next, mul(g, *real_lr_ * lr_scale_)), h->curvature);
    } else {
      next = sub(p.detach(), mul(g, real_lr_.value_or(fallback_lr_) * lr_scale_));
    }
    if (all(isfinite(next)).item() == 0.0) return false;
    updates.emplace_back(p, next);
  }
  for (auto& [p, next] : updates) {
    Tensor target = p.detach();
    copy_(target, next);
  }
  return true;
}

void ModuleTrainer::emit(io::TraceEvent event) {
  if (!trace_) return;
  try {
    trace_->write(event);
  } catch (const SpiralError&) {
    ++trace_errors_;
  }
}

EpochStats ModuleTrainer::train_epoch(nn::Module& module, const Loss& loss, const BatchSource& batches,
                                      const RoundtableSchedule& schedule) {
  const auto start = std::chrono::steady_clock::now();
  EpochStats stats;
  ++epoch_;
  module.to(device_);
  zero(module);
  module.train(true);
  Tensor x, y;
  while (batches(x, y)) {
    to_backend(x, y);
    const Tensor pred = module(x);
    const Tensor l = loss(pred, y);
    const double value = l.item();
    ++steps_;
    if (!std::isfinite(value)) {
      ++stats.skipped_steps;
      zero(module);
      if (trace_) emit({"step", 0, ++trace_step_, epoch_, {{"trainer.loss", value}, {"trainer.skipped", 1.0}}, {}, {}});
      publish_step(epoch_, steps_, x, value, true, nullptr, lr_scale_);
      continue;
    }
    const Tensor g = grad({l}, {pred}, {}, true)[0];
    const auto energy = schedule.band_energy(g);
    for (int i = 0; i < 3; ++i) stats.band_energy[i] += energy[i];
    if (spectral_) lr_scale_ = spectral_->observe(energy);
    RoundtableConfig cfg = schedule.config();
    if (desire_ && desire_->roundtable) {
      if (const auto im = desire_->roundtable->impulse()) {
        stats.desire_multipliers = {im->above, im->here, im->beneath};
        for (int i = 0; i < 3; ++i) cfg.band_weights[i] *= stats.desire_multipliers[i];
      }
    }
    const auto& w = cfg.band_weights;
    if (w[0] == 1.0 && w[1] == 1.0 && w[2] == 1.0) {
      pred.backward(g);
    } else {
      pred.backward(mul(g, RoundtableSchedule(schedule.rows(), schedule.cols(), cfg).weight_mask(g)));
    }
    if (scheduler_) {
      double total = 0.0;
      int64_t count = 0;
      for (const Tensor& p : module.parameters()) {
        if (p.grad().defined()) {
          total += sum(abs(p.grad().to(reduction_dtype(p.grad())))).item();
          count += p.numel();
        }
      }
      const CurvatureDecision d = scheduler_->observe_pressure(count ? total / count : 0.0);
      if (d.changed) {
        curvature_ = d.curvature;
        for (auto& [key, m] : module.named_modules()) {
          if (const auto h = zspace::hypergrad_of(*m))
            zspace::set_own_hypergrad(*m, zspace::HypergradSettings{curvature_, h->learning_rate});
        }
      }
    }
    const bool stepped = step(module);
    if (stepped) {
      stats.total_loss += value;
      ++stats.batches;
    } else {
      ++stats.skipped_steps;
    }
    zero(module);
    if (trace_) {
      emit({"step",
            0,
            ++trace_step_,
            epoch_,
            {{"trainer.loss", value},
             {"trainer.skipped", stepped ? 0.0 : 1.0},
             {"trainer.band_above", energy[0]},
             {"trainer.band_here", energy[1]},
             {"trainer.band_beneath", energy[2]},
             {"trainer.lr_scale", lr_scale_}},
            {},
            {}});
    }
    publish_step(epoch_, steps_, x, value, !stepped, &energy, lr_scale_);
  }
  stats.average_loss = stats.batches ? stats.total_loss / static_cast<double>(stats.batches) : 0.0;
  if (desire_ && desire_->trainer) stats.desire_summary = desire_->trainer->drain_summary();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (trace_) {
    emit({"epoch",
          0,
          std::nullopt,
          epoch_,
          {{"trainer.average_loss", stats.average_loss},
           {"trainer.total_loss", stats.total_loss},
           {"trainer.batches", static_cast<double>(stats.batches)},
           {"trainer.skipped_steps", static_cast<double>(stats.skipped_steps)},
           {"trainer.seconds", stats.seconds}},
          {},
          {}});
  }
  return stats;
}

EpochStats ModuleTrainer::evaluate_epoch(nn::Module& module, const Loss& loss, const BatchSource& batches) {
  const auto start = std::chrono::steady_clock::now();
  EpochStats stats;
  const bool was_training = module.is_training();
  module.to(device_);
  module.eval();
  NoGradGuard ng;
  Tensor x, y;
  try {
    while (batches(x, y)) {
      to_backend(x, y);
      const double value = loss(module(x), y).item();
      stats.total_loss += value;
      ++stats.batches;
    }
  } catch (...) {
    module.train(was_training);
    throw;
  }
  module.train(was_training);
  stats.average_loss = stats.batches ? stats.total_loss / static_cast<double>(stats.batches) : 0.0;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (trace_) {
    emit({"eval",
          0,
          std::nullopt,
          epoch_,
          {{"eval.average_loss", stats.average_loss},
           {"eval.batches", static_cast<double>(stats.batches)},
           {"eval.seconds", stats.seconds}},
          {},
          {}});
  }
  return stats;
}

}  // namespace st::train
