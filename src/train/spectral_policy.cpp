#include "spiraltorch/train/spectral_policy.h"

#include <algorithm>
#include <cmath>

#include "spiraltorch/error.h"

namespace st::train {

SpectralLearningRatePolicy::SpectralLearningRatePolicy(Options o) : opt_(o) {
  if (!(o.smoothing > 0 && o.smoothing <= 1) || !(o.target_concentration > 0 && o.target_concentration <= 1) ||
      !(o.lr_min > 0 && o.lr_min <= o.lr_max) || !(o.max_lr_step >= 1) || !std::isfinite(o.gain)) {
    throw ValueError(
        "SpectralLearningRatePolicy: need 0 < smoothing <= 1, 0 < target_concentration <= 1, "
        "0 < lr_min <= lr_max, max_lr_step >= 1 and a finite gain");
  }
}

double SpectralLearningRatePolicy::observe(const std::array<double, 3>& e) {
  const double total = e[0] + e[1] + e[2];
  if (!(total > 0) || !std::isfinite(total)) return scale_;
  const double c = std::max(e[0] / total, 1e-6);
  ema_ = ema_ ? *ema_ + opt_.smoothing * (c - *ema_) : c;
  const double wanted = std::clamp(std::pow(opt_.target_concentration / *ema_, opt_.gain), opt_.lr_min, opt_.lr_max);
  scale_ = std::clamp(wanted, scale_ / opt_.max_lr_step, scale_ * opt_.max_lr_step);
  return scale_;
}

}  // namespace st::train
