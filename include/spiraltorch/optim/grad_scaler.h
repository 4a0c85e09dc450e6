#pragma once
// Dynamic loss scaling for float16 training, like torch.amp.GradScaler: the loss is multiplied
// by a scale before backward so small gradients survive in float16; step() divides the
// gradients by it again, skips the optimizer step when any gradient is NaN or infinite, and
// update() halves the scale after such a step and doubles it after `growth_interval` clean ones.
#include <cstdint>
#include <optional>
#include <unordered_set>

#include "spiraltorch/optim/optimizer.h"
#include "spiraltorch/tensor.h"

namespace st::optim {

class GradScaler {
 public:
  struct Options {
    double init_scale = 65536.0;
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int64_t growth_interval = 2000;
    bool enabled = true;
  };
  // The scaler's whole state (what state_dict holds).
  struct State {
    double scale;
    int64_t growth_tracker;
    int64_t skipped_steps;
  };

  explicit GradScaler(Options options);
  GradScaler() : GradScaler(Options{}) {}

  // loss * scale (the loss itself when disabled).
  Tensor scale(const Tensor& loss) const;
  // Divides the gradients of `opt`'s parameters by the scale, once per step, and records
  // whether any is non-finite. SpiralError when called twice for one optimizer before update().
  void unscale(Optimizer& opt);
  // Unscales (if not yet done) and runs opt.step() unless a gradient was non-finite; returns
  // whether the optimizer stepped. Skipped steps are counted (skipped_steps()).
  bool step(Optimizer& opt);
  // Adjusts the scale from this step's outcome (or sets new_scale) and starts the next step.
  void update(std::optional<double> new_scale = std::nullopt);

  double get_scale() const { return enabled_ ? state_.scale : 1.0; }
  bool is_enabled() const { return enabled_; }
  bool found_inf() const { return found_inf_; }  // in the current step so far
  int64_t skipped_steps() const { return state_.skipped_steps; }
  const Options& options() const { return opts_; }
  State state() const { return state_; }
  void load_state(const State& s);

 private:
  Options opts_;
  bool enabled_;
  State state_;
  bool found_inf_ = false;
  std::unordered_set<const Optimizer*> unscaled_, stepped_;
};

}  // namespace st::optim
