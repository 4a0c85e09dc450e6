#include "spiraltorch/zspace/topos.h"

#include <cmath>
#include <string>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::zspace {

OpenCartesianTopos::OpenCartesianTopos(double curvature, double tolerance, double saturation, int64_t max_depth,
                                       int64_t max_volume, double porosity)
    : curvature_(curvature),
      tolerance_(tolerance),
      saturation_(saturation),
      max_depth_(max_depth),
      max_volume_(max_volume),
      porosity_(porosity) {
  auto bad = [](const char* name, double v, const char* want) {
    throw ValueError(std::string("OpenCartesianTopos: ") + name + " must be " + want + ", got " + std::to_string(v));
  };
  if (!(curvature < 0) || !std::isfinite(curvature)) bad("curvature", curvature, "negative and finite");
  if (!(tolerance > 0) || !std::isfinite(tolerance)) bad("tolerance", tolerance, "positive and finite");
  if (!(saturation > 0) || !std::isfinite(saturation)) bad("saturation", saturation, "positive and finite");
  if (max_depth <= 0) bad("max_depth", static_cast<double>(max_depth), "positive");
  if (max_volume <= 0) bad("max_volume", static_cast<double>(max_volume), "positive");
  if (!(porosity >= 0 && porosity <= 1)) bad("porosity", porosity, "in [0, 1]");
}

OpenCartesianTopos OpenCartesianTopos::with_porosity(double porosity) const {
  return OpenCartesianTopos(curvature_, tolerance_, saturation_, max_depth_, max_volume_, porosity);
}

const Tensor& OpenCartesianTopos::guard_tensor(const Tensor& t, const char* what) const {
  if (t.numel() > max_volume_) {
    throw ShapeError(std::string(what) + ": " + std::to_string(t.numel()) + " values exceed the topos volume " +
                     std::to_string(max_volume_));
  }
  NoGradGuard ng;
  if (t.numel() > 0 && is_floating(t.dtype()) && all(isfinite(t)).item() == 0.0) {
    throw ValueError(std::string(what) + ": the tensor holds non-finite values");
  }
  return t;
}

void OpenCartesianTopos::ensure_loop_free(int64_t depth) const {
  if (depth >= max_depth_) {
    throw ValueError("OpenCartesianTopos: depth " + std::to_string(depth) + " reaches the limit " +
                     std::to_string(max_depth_));
  }
}

double OpenCartesianTopos::saturate(double v) const {
  if (!std::isfinite(v)) return 0.0;
  const double l = saturation_;
  return l * std::tanh(v / l) + porosity_ * tolerance_ * v / (1.0 + std::abs(v));
}

Tensor OpenCartesianTopos::saturate(const Tensor& t) const {
  guard_tensor(t, "OpenCartesianTopos.saturate");
  const double l = saturation_;
  // Strictly increasing: tanh and v / (1 + |v|) both are.
  return add(mul(tanh(div(t, l)), l), mul(div(t, add(abs(t), 1.0)), porosity_ * tolerance_));
}

}  // namespace st::zspace
