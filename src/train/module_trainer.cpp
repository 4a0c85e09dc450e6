#include "spiraltorch/train/module_trainer.h"

#include <cmath>

#include "spiraltorch/autograd.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/wgpu.h"
#include "spiraltorch/zspace/module_hypergrad.h"

namespace st::train {

namespace {
// Gradient norms are summed in float64 where the device has it.
Dtype reduction_dtype(const Tensor& g) { return g.device().has_float64() ? Dtype::Float64 : Dtype::Float32; }

void check_rate(double v, const char* what) {
  if (!(v > 0) || !std::isfinite(v)) {
    throw ValueError(std::string("ModuleTrainer: ") + what + " must be positive and finite, got " + std::to_string(v));
  }
}

optim::TrainingEngine::Options engine_options() {
  optim::TrainingEngine::Options o;
  o.source = "ModuleTrainer";
  o.check_gradients = true;       // all or nothing: a non-finite gradient skips the batch
  o.zero_grad_after_step = true;  // each batch leaves clean gradients behind
  return o;
}
}  // namespace

ModuleTrainer::ModuleTrainer(std::string backend, double curvature, double hyper_lr, double fallback_lr)
    : requested_(std::move(backend)),
      curvature_(curvature),
      hyper_lr_(hyper_lr),
      fallback_lr_(fallback_lr),
      engine_(engine_options()) {
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
  engine_.options().max_grad_norm = max_norm;
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
  std::vector<Tensor> params;
  for (const auto& [p, h] : zspace::parameters_with_hypergrad(module)) params.push_back(p);
  return optim::gate_gradients(params, engine_.options().max_grad_norm) && apply_update(module);
}

bool ModuleTrainer::apply_update(nn::Module& module) {
  NoGradGuard ng;
  // Compute every update first; commit only if all are finite.
  std::vector<std::pair<Tensor, Tensor>> updates;
  for (const auto& [p, h] : zspace::parameters_with_hypergrad(module)) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
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

optim::StepParts ModuleTrainer::parts(nn::Module& module, const Loss& loss) {
  optim::StepParts parts;
  parts.zero_grad = [&module] { module.zero_grad(); };
  parts.forward = [&module](const Tensor& x) { return module(x); };
  parts.loss = loss;
  parts.update = [this, &module](optim::StepReport&) { return apply_update(module); };
  parts.parameters = module.parameters();
  parts.place = [this](Tensor& x, Tensor& y) { to_backend(x, y); };
  parts.set_training = [&module](bool training) {
    const bool was = module.is_training();
    module.train(training);
    return was;
  };
  return parts;
}

EpochStats ModuleTrainer::train_epoch(nn::Module& module, const Loss& loss, const BatchSource& batches,
                                      const RoundtableSchedule& schedule) {
  EpochStats stats;
  module.to(device_);
  zero(module);
  optim::StepParts step = parts(module, loss);
  // The roundtable: the output gradient is split into bands by |g| and each band weighted
  // before it flows back into the module; the band energies drive the spectral policy.
  step.backward = [&](const Tensor& l, const Tensor& pred, optim::StepReport& report) {
    const Tensor g = grad({l}, {pred}, {}, true)[0];
    const auto energy = schedule.band_energy(g);
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
    report.metrics = {
        {"band_above", energy[0]}, {"band_here", energy[1]}, {"band_beneath", energy[2]}, {"lr_scale", lr_scale_}};
  };
  if (trace_) {
    step.observe = [this](const optim::StepReport& r) {
      io::TraceEvent e{"step", 0, ++trace_step_, r.epoch, {{"trainer.loss", r.loss}}, {}, {}};
      e.metrics.emplace_back("trainer.skipped", r.skipped ? 1.0 : 0.0);
      for (const auto& [name, value] : r.metrics) e.metrics.emplace_back("trainer." + name, value);
      emit(std::move(e));
    };
  }
  const optim::EpochReport epoch = engine_.train_epoch(step, batches);
  stats.batches = epoch.batches;
  stats.total_loss = epoch.total_loss;
  stats.skipped_steps = epoch.skipped_steps;
  stats.average_loss = epoch.batches ? epoch.average_loss : 0.0;
  const char* bands[3] = {"band_above", "band_here", "band_beneath"};
  for (int i = 0; i < 3; ++i) stats.band_energy[i] = epoch.metric_sum(bands[i]).value_or(0.0);
  if (desire_ && desire_->trainer) stats.desire_summary = desire_->trainer->drain_summary();
  stats.seconds = epoch.seconds;
  if (trace_) {
    emit({"epoch",
          0,
          std::nullopt,
          epoch.epoch,
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
  module.to(device_);
  const optim::EpochReport epoch = engine_.evaluate(parts(module, loss), batches);
  EpochStats stats;
  stats.batches = epoch.batches;
  stats.total_loss = epoch.total_loss;
  stats.average_loss = epoch.batches ? epoch.average_loss : 0.0;
  stats.seconds = epoch.seconds;
  if (trace_) {
    emit({"eval",
          0,
          std::nullopt,
          engine_.epoch(),
          {{"eval.average_loss", stats.average_loss},
           {"eval.batches", static_cast<double>(stats.batches)},
           {"eval.seconds", stats.seconds}},
          {},
          {}});
  }
  return stats;
}

}  // namespace st::train
