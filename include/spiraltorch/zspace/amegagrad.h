#pragma once
// Amegagrad: a Hypergrad and a Realgrad tape stepped together on the same weights, with rates
// scaled by DesireGradientControl.
#include <optional>
#include <string_view>
#include <utility>

#include "spiraltorch/zspace/desire_control.h"
#include "spiraltorch/zspace/hypergrad.h"
#include "spiraltorch/zspace/realgrad.h"

namespace st::zspace {

// step(weights): optionally tunes both rates (base rate x control scale, never compounding), then
// moves each row by a Riemannian SGD step of the hyperbolic tape and an SGD step of the Euclidean
// tape, clips the result into the ball and writes it in place; both tapes keep reporting the
// gradient they applied. A non-finite result throws and changes nothing (rates included).
// With a topos both tapes are guarded by it (see GradientTape) and so is the combined update.
class Amegagrad {
 public:
  Amegagrad(int64_t rows, int64_t cols, double curvature = -1.0, double hyper_learning_rate = 0.05,
            double real_learning_rate = 0.01, double gain = 1.0,
            const std::optional<OpenCartesianTopos>& topos = std::nullopt);

  std::pair<int64_t, int64_t> shape() const { return hyper_.shape(); }
  double curvature() const { return hyper_.curvature(); }
  double hyper_learning_rate() const { return hyper_lr_; }
  double real_learning_rate() const { return real_lr_; }
  double gain() const { return gain_; }
  const std::optional<OpenCartesianTopos>& topos() const { return hyper_.topos(); }
  Hypergrad& hyper() { return hyper_; }
  Realgrad& real() { return real_; }
  const std::optional<DesireGradientControl>& last_control() const { return last_control_; }

  void zero_grad();
  // Adds wave (or prediction - target) to both tapes; all or nothing.
  void accumulate_wave(const Tensor& wave);
  void accumulate_pair(const Tensor& prediction, const Tensor& target);
  // Encodes text and adds it to both tapes, zero-padded or truncated to rows * cols.
  void absorb_text(const LanguageWaveEncoder& encoder, std::string_view text);
  // The control from the two tapes' pending gradients (what step would apply); gain defaults to gain().
  DesireGradientControl desire_control(std::optional<double> gain = std::nullopt) const;
  // Sets the tapes' rates to base rate x the given scales (ValueError unless both are positive and finite).
  void tune(double hyper_scale, double real_scale);
  void tune(const DesireGradientControl& control);
  // One combined step; with tune, the rates come from control (or desire_control(gain)) first.
  Tensor& step(Tensor& weights, bool tune = true, std::optional<double> gain = std::nullopt,
               const std::optional<DesireGradientControl>& control = std::nullopt);

 private:
  std::pair<double, double> rates(double hyper_scale, double real_scale) const;

  Hypergrad hyper_;
  Realgrad real_;
  double hyper_lr_, real_lr_, gain_;
  std::optional<DesireGradientControl> last_control_;
};

}  // namespace st::zspace
