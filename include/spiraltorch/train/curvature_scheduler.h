#pragma once
// A proportional controller that moves the hyperbolic curvature toward a target
// "gradient pressure" (mean |g|): positive error flattens (curvature toward 0).
#include <optional>

namespace st::train {

struct CurvatureDecision {
  double raw_pressure = 0.0;
  double smoothed_pressure = 0.0;
  double curvature = 0.0;
  bool changed = false;
};

class CurvatureScheduler {
 public:
  struct Options {
    std::optional<double> initial;
    double min_curvature = -1.5;
    double max_curvature = -0.2;
    double target_pressure = 0.05;
    double step = 0.05;
    double tolerance = 0.05;
    double smoothing = 0.2;
    double proportional_gain = 1.0;
  };
  explicit CurvatureScheduler(Options options);
  CurvatureDecision observe_pressure(double pressure);
  // Clamps `curvature` into the bounds and restarts the pressure history.
  void sync(double curvature);
  double current() const { return current_; }
  const Options& options() const { return opt_; }
  std::optional<double> last_pressure() const { return ema_; }

 private:
  Options opt_;
  double current_;
  std::optional<double> ema_;
};

}  // namespace st::train
