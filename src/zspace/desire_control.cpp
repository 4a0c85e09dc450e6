#include "spiraltorch/zspace/desire_control.h"

#include <algorithm>
#include <cmath>

namespace st::zspace {

namespace {

double clamp(double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }

}  // namespace

DesireGradientInterpretation::DesireGradientInterpretation(const GradientSummary& hyper, const GradientSummary& real)
    : hyper_pressure(hyper.mean_abs()), real_pressure(real.mean_abs()) {
  const double hr = hyper.rms(), rr = real.rms();
  balance = rr > 1e-6 ? clamp(hr / rr, 0.0, 16.0) : (hr > 1e-6 ? 16.0 : 1.0);
  sharpness = hyper.std() > 1e-6 ? std::min(std::fabs(hyper.kurtosis() - 3.0), 4.0) : 0.0;
  const double hp = hyper_pressure, rp = real_pressure;
  stability = clamp(1.0 - std::fabs(hp - rp) / (hp + rp + 1e-6), 0.0, 1.0);
  saturation = std::max(hyper.linf(), real.linf());
  activation = 0.5 * (hyper.activation() + real.activation());
  sign_alignment = clamp(1.0 - 0.5 * std::fabs(hyper.sign_lean() - real.sign_lean()), 0.0, 1.0);
  sign_entropy = clamp(0.5 * (hyper.sign_entropy() + real.sign_entropy()), 0.0, 1.0);
  hyper_std = hyper.std();
  real_std = real.std();
}

double DesireGradientInterpretation::penalty_gain() const {
  return clamp(1 + 0.35 * std::min(std::fabs(balance - 1), 2.0) + 0.35 * std::min(1 - stability, 1.0) +
                   0.2 * std::min(sharpness / 4, 1.0) + 0.2 * std::min(1 - sign_alignment, 1.0) +
                   0.1 * std::min(1 - activation, 1.0),
               1.0, 3.5);
}

DesireGradientControl::DesireGradientControl(const DesireGradientInterpretation& interp, double gain_in)
    : interp_(interp) {
  const double gain = clamp(gain_in, 0.0, 1.0);
  const double imb = clamp(interp.balance - 1.0, -4.0, 4.0);
  const double caution = 1.0 - interp.stability, sat = std::tanh(interp.saturation);
  const double dormant = 1.0 - interp.activation, mismatch = 1.0 - interp.sign_alignment;
  double hyper, real;
  if (imb >= 0) {
    hyper = clamp(1 / (1 + imb), 0.25, 1.0);
    real = clamp(1 + imb / 2, 1.0, 1.8);
  } else {
    hyper = clamp(1 - imb / 2, 1.0, 1.8);
    real = clamp(1 / (1 - imb), 0.25, 1.0);
  }
  hyper = clamp(hyper * clamp(1 - 0.6 * caution - 0.4 * sat - 0.25 * mismatch, 0.2, 1.0), 0.25, 1.8);
  real = clamp(real * clamp(1 - 0.4 * caution - 0.25 * sat - 0.2 * dormant, 0.25, 1.0), 0.25, 1.8);
  quality_gain_ = clamp(0.6 + 0.3 * (1 - caution) + 0.1 * interp.sign_alignment, 0.4, 1.0) * gain;
  const double q = 1.0 / (1.0 + std::exp(-quality_gain_ * 0.9));
  const double scale = 0.4 + 0.9 * q;
  hyper_ = clamp(hyper * scale, 0.1, 2.0);
  real_ = clamp(real * scale, 0.1, 2.0);
  penalty_ = interp.penalty_gain();
  events_.push_back(scale * std::max(hyper, real) > 1 ? "lr_increase" : "lr_decrease");
  if (quality_gain_ > 0) events_.push_back("quality_weight");
}

DesireGradientControl desire_control(const GradientSummary& hyper, const GradientSummary& real, double gain) {
  return DesireGradientControl(DesireGradientInterpretation(hyper, real), gain);
}

}  // namespace st::zspace
