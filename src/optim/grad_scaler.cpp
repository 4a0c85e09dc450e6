#include "spiraltorch/optim/grad_scaler.h"

#include <cmath>
#include <string>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::optim {

namespace {
void check_positive(double v, const char* what) {
  if (!(v > 0.0) || !std::isfinite(v)) {
    throw ValueError(std::string("GradScaler: ") + what + " must be a positive finite number, got " +
                     std::to_string(v));
  }
}
}  // namespace

GradScaler::GradScaler(Options options) : opts_(options), enabled_(options.enabled), state_{options.init_scale, 0, 0} {
  check_positive(opts_.init_scale, "init_scale");
  if (!(opts_.growth_factor > 1.0) || !std::isfinite(opts_.growth_factor)) {
    throw ValueError("GradScaler: growth_factor must be > 1, got " + std::to_string(opts_.growth_factor));
  }
  if (!(opts_.backoff_factor > 0.0 && opts_.backoff_factor < 1.0)) {
    throw ValueError("GradScaler: backoff_factor must lie in (0, 1), got " + std::to_string(opts_.backoff_factor));
  }
  if (opts_.growth_interval <= 0) {
    throw ValueError("GradScaler: growth_interval must be positive, got " + std::to_string(opts_.growth_interval));
  }
}

Tensor GradScaler::scale(const Tensor& loss) const {
  if (!enabled_) return loss;
  if (!loss.defined()) throw ValueError("GradScaler.scale: the loss is undefined");
  return mul(loss, state_.scale);
}

void GradScaler::unscale(Optimizer& opt) {
  if (!enabled_) return;
  if (stepped_.count(&opt))
    throw SpiralError("GradScaler.unscale_: step() was already called for this optimizer; call update() first");
  if (unscaled_.count(&opt)) {
    throw SpiralError("GradScaler.unscale_: already called for this optimizer since the last update()");
  }
  {
    NoGradGuard ng;
    const double inv = 1.0 / state_.scale;
    for (const auto& g : opt.param_groups()) {
      for (const Tensor& p : g->params) {
        Tensor grad = p.grad();
        if (grad.defined()) mul_(grad, inv);
      }
    }
  }
  if (!opt.grads_finite()) found_inf_ = true;
  unscaled_.insert(&opt);
}

bool GradScaler::step(Optimizer& opt) {
  if (!enabled_) return static_cast<bool>(opt.step());
  if (stepped_.count(&opt))
    throw SpiralError("GradScaler.step: already called for this optimizer; call update() first");
  if (!unscaled_.count(&opt)) unscale(opt);
  stepped_.insert(&opt);
  if (found_inf_) {
    ++state_.skipped_steps;
    return false;
  }
  opt.step();  // unscale() found every gradient finite, so the step applies (no second read)
  return true;
}

void GradScaler::update(std::optional<double> new_scale) {
  if (!enabled_) return;
  if (new_scale) {
    check_positive(*new_scale, "new_scale");
    state_.scale = *new_scale;
    state_.growth_tracker = 0;
  } else if (found_inf_) {
    state_.scale *= opts_.backoff_factor;
    state_.growth_tracker = 0;
  } else if (++state_.growth_tracker == opts_.growth_interval) {
    state_.scale *= opts_.growth_factor;
    state_.growth_tracker = 0;
  }
  found_inf_ = false;
  unscaled_.clear();
  stepped_.clear();
}

void GradScaler::load_state(const State& s) {
  check_positive(s.scale, "scale");
  if (s.growth_tracker < 0 || s.skipped_steps < 0) {
    throw ValueError("GradScaler.load_state_dict: growth_tracker and skipped_steps must be non-negative");
  }
  state_ = s;
}

}  // namespace st::optim
