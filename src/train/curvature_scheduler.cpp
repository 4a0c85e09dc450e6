#include "spiraltorch/train/curvature_scheduler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "spiraltorch/error.h"

namespace st::train {

CurvatureScheduler::CurvatureScheduler(Options options) : opt_(options) {
  opt_.min_curvature = std::min(opt_.min_curvature, -1e-6);
  opt_.max_curvature = std::min(opt_.max_curvature, -1e-6);
  if (opt_.min_curvature > opt_.max_curvature) std::swap(opt_.min_curvature, opt_.max_curvature);
  if (!(opt_.step > 0) || !(opt_.tolerance >= 0) || !std::isfinite(opt_.target_pressure)) {
    throw ValueError("CurvatureScheduler: step must be > 0, tolerance >= 0 and target_pressure finite");
  }
  opt_.smoothing = std::clamp(opt_.smoothing, 0.01, 1.0);
  current_ = std::clamp(opt_.initial.value_or(0.5 * (opt_.min_curvature + opt_.max_curvature)), opt_.min_curvature,
                        opt_.max_curvature);
}

void CurvatureScheduler::sync(double curvature) {
  current_ = std::clamp(curvature, opt_.min_curvature, opt_.max_curvature);
  ema_.reset();
}

CurvatureDecision CurvatureScheduler::observe_pressure(double pressure) {
  if (!std::isfinite(pressure)) {
    throw ValueError("CurvatureScheduler: pressure must be finite, got " + std::to_string(pressure));
  }
  ema_ = ema_ ? *ema_ + opt_.smoothing * (pressure - *ema_) : pressure;
  const double err = *ema_ - opt_.target_pressure;
  const double before = current_;
  if (std::fabs(err) > opt_.tolerance) {
    const double delta = std::clamp(opt_.proportional_gain * err, -opt_.step, opt_.step);
    current_ = std::clamp(current_ + delta, opt_.min_curvature, opt_.max_curvature);
  }
  return {pressure, *ema_, current_, current_ != before};
}

}  // namespace st::train
