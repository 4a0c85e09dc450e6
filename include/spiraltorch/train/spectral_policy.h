#pragma once
// A heuristic learning-rate policy driven by the roundtable band energies. It has
// no theory behind it: it lowers the step when the gradient mass concentrates in
// the Above band (a few dominant entries) and raises it when the mass is diffuse.
//   concentration c = above / (above + here + beneath), smoothed by an EMA;
//   scale = clamp((target / c)^gain, lr_min, lr_max), moved from the previous scale
//   by at most a factor max_lr_step per batch.
// ModuleTrainer multiplies its learning rates by `scale` for one step (no
// compounding). It is off unless enabled, so default training is plain SGD.
#include <array>
#include <optional>

namespace st::train {

class SpectralLearningRatePolicy {
 public:
  struct Options {
    double smoothing = 0.2;
    double target_concentration = 0.5;
    double gain = 0.5;
    double lr_min = 0.1;
    double lr_max = 6.0;
    double max_lr_step = 1.4;
  };
  explicit SpectralLearningRatePolicy(Options options);
  // Observes one batch's (above, here, beneath) energies and returns the LR scale.
  double observe(const std::array<double, 3>& band_energy);
  double last_scale() const { return scale_; }
  std::optional<double> concentration() const { return ema_; }
  const Options& options() const { return opt_; }

 private:
  Options opt_;
  std::optional<double> ema_;
  double scale_ = 1.0;
};

}  // namespace st::train
