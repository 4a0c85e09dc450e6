#pragma once
// OpenCartesianTopos: the guard that Z-space tapes and biomes pass values through.
// It bounds what a structure may hold (volume, recursion depth), refuses non-finite
// values, and saturates magnitudes with a monotone soft clip L tanh(v / L) (the
// original's formula was not monotone: values just above L came out below L).
#include <cstdint>

#include "spiraltorch/tensor.h"

namespace st::zspace {

class OpenCartesianTopos {
 public:
  // curvature < 0, tolerance > 0, saturation > 0, max_depth > 0, max_volume > 0; porosity in [0, 1].
  OpenCartesianTopos(double curvature, double tolerance, double saturation, int64_t max_depth, int64_t max_volume,
                     double porosity = 0.2);

  double curvature() const { return curvature_; }
  double tolerance() const { return tolerance_; }
  double saturation() const { return saturation_; }
  int64_t max_depth() const { return max_depth_; }
  int64_t max_volume() const { return max_volume_; }
  double porosity() const { return porosity_; }
  // The same guard with another porosity (how much a saturated value may still leak
  // through: the clip is L tanh(v / L) + porosity * tolerance * v / (1 + |v|)).
  OpenCartesianTopos with_porosity(double porosity) const;

  // Raises ShapeError when the tensor holds more than max_volume values and ValueError
  // when one is not finite; returns the tensor unchanged otherwise.
  const Tensor& guard_tensor(const Tensor& t, const char* what = "guard_tensor") const;
  // Raises ValueError when depth >= max_depth.
  void ensure_loop_free(int64_t depth) const;
  // The monotone soft clip of one value (non-finite values become 0).
  double saturate(double v) const;
  // guard_tensor, then the clip element-wise (a new tensor, same dtype).
  Tensor saturate(const Tensor& t) const;

 private:
  double curvature_, tolerance_, saturation_;
  int64_t max_depth_, max_volume_;
  double porosity_;
};

}  // namespace st::zspace
