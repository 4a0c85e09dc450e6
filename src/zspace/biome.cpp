#include "spiraltorch/zspace/biome.h"

#include <cmath>

#include "spiraltorch/autograd.h"
#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/ops.h"

namespace st::zspace {

void TensorBiome::absorb(const Tensor& shoot, const std::string& label) { absorb_weighted(shoot, 1.0, label); }

void TensorBiome::absorb_weighted(const Tensor& shoot, double weight, const std::string& label) {
  if (!(weight > 0) || !std::isfinite(weight)) {
    throw ValueError("TensorBiome.absorb_weighted: weight must be positive and finite, got " + std::to_string(weight));
  }
  if (!shoots_.empty() && shoot.shape() != shoots_.front().shape()) {
    throw ShapeError("TensorBiome.absorb: shoot shape " + shape_str(shoot.shape()) + " differs from " +
                     shape_str(shoots_.front().shape()));
  }
  topos_.guard_tensor(shoot, "TensorBiome.absorb");
  const int64_t stored = stored_volume() + shoot.numel();
  if (stored > topos_.max_volume()) {
    throw ShapeError("TensorBiome.absorb: " + std::to_string(stored) + " stored values would exceed the topos volume " +
                     std::to_string(topos_.max_volume()));
  }
  NoGradGuard ng;
  shoots_.push_back(topos_.saturate(shoot.detach().to(Dtype::Float64)));
  weights_.push_back(weight);
  labels_.push_back(label);
}

int64_t TensorBiome::stored_volume() const {
  int64_t n = 0;
  for (const Tensor& s : shoots_) n += s.numel();
  return n;
}

double TensorBiome::total_weight() const {
  double s = 0;
  for (double w : weights_) s += w;
  return s;
}

Tensor TensorBiome::canopy() const {
  if (shoots_.empty()) throw ValueError("TensorBiome.canopy: the biome is empty");
  NoGradGuard ng;
  Tensor acc = zeros_like(shoots_.front());
  for (size_t i = 0; i < shoots_.size(); ++i) acc = add(acc, mul(shoots_[i], weights_[i]));
  return topos_.saturate(div(acc, total_weight()));
}

Tensor TensorBiome::harvest() const {
  if (shoots_.empty()) throw ValueError("TensorBiome.harvest: the biome is empty");
  return stack(shoots_, 0);
}

Tensor TensorBiome::to_ball() const {
  const Tensor c = canopy();
  return geometry::clip_to_ball(geometry::expmap0(c.dim() == 0 ? reshape(c, {1}) : c, topos_.curvature()),
                                topos_.curvature());
}

void TensorBiome::clear() {
  shoots_.clear();
  weights_.clear();
  labels_.clear();
}

}  // namespace st::zspace
