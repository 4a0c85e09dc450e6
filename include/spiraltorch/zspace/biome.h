#pragma once
// TensorBiome: weighted "shoots" (tensors of one shape) gathered under a topos guard.
// Each shoot is guarded, then rewritten through the topos' monotone saturation when
// absorbed; canopy() is their weighted mean, saturated again; harvest() stacks them;
// to_ball() re-imports the canopy into the topos' Poincare ball.
#include <string>
#include <vector>

#include "spiraltorch/zspace/topos.h"

namespace st::zspace {

class TensorBiome {
 public:
  explicit TensorBiome(OpenCartesianTopos topos) : topos_(std::move(topos)) {}

  // Adds a shoot (weight 1). The shoot must match the first one's shape, be finite,
  // and keep the total stored volume within the topos' max_volume; nothing changes otherwise.
  void absorb(const Tensor& shoot, const std::string& label = "");
  // Same with a weight > 0.
  void absorb_weighted(const Tensor& shoot, double weight, const std::string& label = "");
  // sum_i w_i T_i / sum_i w_i, saturated by the topos (float64). ValueError when empty.
  Tensor canopy() const;
  // The shoots stacked along a new first dimension.
  Tensor harvest() const;
  // exp_0 of the canopy's rows into the ball of the topos' curvature.
  Tensor to_ball() const;

  const std::vector<double>& weights() const { return weights_; }
  const std::vector<std::string>& labels() const { return labels_; }
  double total_weight() const;
  int64_t stored_volume() const;
  int64_t remaining_volume() const { return topos_.max_volume() - stored_volume(); }
  size_t size() const { return shoots_.size(); }
  bool empty() const { return shoots_.empty(); }
  void clear();
  const OpenCartesianTopos& topos() const { return topos_; }

 private:
  OpenCartesianTopos topos_;
  std::vector<Tensor> shoots_;
  std::vector<double> weights_;
  std::vector<std::string> labels_;
};

}  // namespace st::zspace
