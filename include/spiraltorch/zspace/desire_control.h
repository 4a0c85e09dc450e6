#pragma once
// DesireGradientControl: learning-rate scales for Amegagrad's two tapes from their statistics.
//
// Heuristic, labelled as such (the original's "desire" control): clamped blends of gradient
// statistics turn the balance, agreement and saturation of the hyperbolic gradient H and the
// Euclidean gradient R into rate scales. A fixed rule, not a learned or optimal one.
#include <string>
#include <vector>

#include "spiraltorch/zspace/gradient_summary.h"

namespace st::zspace {

// How H and R relate: pressures (mean |g|), balance (RMS ratio, clamped to [0, 16]), sharpness
// (|kurtosis - 3|, <= 4), stability (1 minus the relative pressure gap), saturation (largest |g|),
// activation, sign alignment and sign entropy.
struct DesireGradientInterpretation {
  DesireGradientInterpretation(const GradientSummary& hyper, const GradientSummary& real);
  // 1 + weighted imbalance, instability, sharpness, sign mismatch and dormancy, in [1, 3.5].
  double penalty_gain() const;

  double hyper_pressure, real_pressure, balance, sharpness, stability, saturation, activation, sign_alignment,
      sign_entropy, hyper_std, real_std;
};

class DesireGradientControl {
 public:
  // gain in [0, 1] (clamped) weights the quality term.
  explicit DesireGradientControl(const DesireGradientInterpretation& interpretation, double gain = 1.0);

  double hyper_rate_scale() const { return hyper_; }
  double real_rate_scale() const { return real_; }
  double penalty_gain() const { return penalty_; }
  double quality_gain() const { return quality_gain_; }
  // "lr_increase"/"lr_decrease", then "quality_weight" when the quality gain is positive.
  const std::vector<std::string>& events() const { return events_; }
  const DesireGradientInterpretation& interpretation() const { return interp_; }

 private:
  DesireGradientInterpretation interp_;
  double hyper_, real_, penalty_, quality_gain_;
  std::vector<std::string> events_;
};

// DesireGradientControl from the two gradient summaries.
DesireGradientControl desire_control(const GradientSummary& hyper, const GradientSummary& real, double gain = 1.0);

}  // namespace st::zspace
