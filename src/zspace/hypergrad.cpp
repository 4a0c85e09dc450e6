#include "spiraltorch/zspace/hypergrad.h"

#include <cmath>

#include "checks.h"
#include "spiraltorch/geometry/poincare.h"

namespace st::zspace {

Hypergrad::Hypergrad(double curvature, double learning_rate, int64_t rows, int64_t cols)
    : GradientTape(learning_rate, rows, cols, "Hypergrad"), c_(detail::check_curvature(curvature, "Hypergrad")) {}

Hypergrad::Hypergrad(double curvature, double learning_rate, int64_t rows, int64_t cols,
                     const OpenCartesianTopos& topos)
    : GradientTape(learning_rate, rows, cols, "Hypergrad", topos), c_(detail::check_curvature(curvature, "Hypergrad")) {
  if (std::fabs(topos.curvature() - c_) > 1e-6) {
    throw ValueError("Hypergrad: the topos curvature " + detail::num(topos.curvature()) + " differs from the tape's " +
                     detail::num(c_));
  }
}

void Hypergrad::absorb_text(const LanguageWaveEncoder& encoder, std::string_view text) {
  if (std::fabs(encoder.curvature() - c_) > 1e-6) {
    throw ValueError("Hypergrad.absorb_text: encoder curvature " + detail::num(encoder.curvature()) +
                     " differs from the tape's " + detail::num(c_));
  }
  GradientTape::absorb_text(encoder, text);
}

void Hypergrad::retune(double curvature, double learning_rate) {
  const double c = detail::check_curvature(curvature, "Hypergrad.retune");
  const double lr = detail::check_learning_rate(learning_rate, "Hypergrad.retune");
  if (const auto& t = topos()) {
    set_topos(OpenCartesianTopos(c, t->tolerance(), t->saturation(), t->max_depth(), t->max_volume(), t->porosity()));
  }
  c_ = c;
  set_lr_unchecked(lr);
  reset();
}

Tensor& Hypergrad::apply(Tensor& weights) {
  const Tensor w = as_matrix(weights, "apply");
  const Tensor updated = geometry::clip_to_ball(
      guarded(geometry::rsgd_step(geometry::clip_to_ball(w, c_), pending_tensor(), c_, learning_rate())), c_);
  return commit(weights, updated, "Hypergrad.apply");
}

}  // namespace st::zspace
