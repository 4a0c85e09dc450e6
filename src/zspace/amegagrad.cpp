#include "spiraltorch/zspace/amegagrad.h"

#include <cmath>

#include "checks.h"
#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/ops.h"

namespace st::zspace {

namespace {

Hypergrad make_hyper(double c, double lr, int64_t rows, int64_t cols, const std::optional<OpenCartesianTopos>& t) {
  return t ? Hypergrad(c, lr, rows, cols, *t) : Hypergrad(c, lr, rows, cols);
}

Realgrad make_real(double lr, int64_t rows, int64_t cols, const std::optional<OpenCartesianTopos>& t) {
  return t ? Realgrad(lr, rows, cols, *t) : Realgrad(lr, rows, cols);
}

}  // namespace

Amegagrad::Amegagrad(int64_t rows, int64_t cols, double curvature, double hyper_learning_rate,
                     double real_learning_rate, double gain, const std::optional<OpenCartesianTopos>& topos)
    : hyper_(make_hyper(curvature, hyper_learning_rate, rows, cols, topos)),
      real_(make_real(real_learning_rate, rows, cols, topos)),
      hyper_lr_(hyper_learning_rate),
      real_lr_(real_learning_rate),
      gain_(gain) {}

void Amegagrad::zero_grad() {
  hyper_.reset();
  real_.reset();
}

void Amegagrad::accumulate_wave(const Tensor& wave) {
  // Both tapes or neither: accumulate into copies, then commit.
  Hypergrad h = hyper_;
  Realgrad r = real_;
  h.accumulate_wave(wave);
  r.accumulate_wave(wave);
  hyper_ = std::move(h);
  real_ = std::move(r);
}

void Amegagrad::accumulate_pair(const Tensor& prediction, const Tensor& target) {
  Hypergrad h = hyper_;
  Realgrad r = real_;
  h.accumulate_pair(prediction, target);
  r.accumulate_pair(prediction, target);
  hyper_ = std::move(h);
  real_ = std::move(r);
}

void Amegagrad::absorb_text(const LanguageWaveEncoder& encoder, std::string_view text) {
  if (std::fabs(encoder.curvature() - curvature()) > 1e-6) {
    throw ValueError("Amegagrad.absorb_text: encoder curvature " + detail::num(encoder.curvature()) + " differs from " +
                     detail::num(curvature()));
  }
  const auto [rows, cols] = shape();
  std::vector<double> flat = encoder.encode_z_space(text).to(Dtype::Float64).to_vector<double>();
  flat.resize(static_cast<size_t>(rows * cols), 0.0);
  // float32 like the tensor the Python implementation built, so the values match it bit for bit.
  std::vector<float> f(flat.begin(), flat.end());
  accumulate_wave(Tensor::from_vector(f, {rows, cols}));
}

DesireGradientControl Amegagrad::desire_control(std::optional<double> gain) const {
  return zspace::desire_control(GradientSummary(hyper_.pending_gradient()), GradientSummary(real_.pending_gradient()),
                                gain.value_or(gain_));
}

std::pair<double, double> Amegagrad::rates(double hyper_scale, double real_scale) const {
  const double h = hyper_lr_ * hyper_scale, r = real_lr_ * real_scale;
  if (!(std::isfinite(h) && h > 0 && std::isfinite(r) && r > 0)) {
    throw ValueError("Amegagrad.tune: the control gives invalid rates (" + detail::num(h) + ", " + detail::num(r) +
                     ")");
  }
  return {h, r};
}

void Amegagrad::tune(double hyper_scale, double real_scale) {
  const auto [h, r] = rates(hyper_scale, real_scale);
  hyper_.set_learning_rate(h);
  real_.set_learning_rate(r);
}

void Amegagrad::tune(const DesireGradientControl& control) {
  tune(control.hyper_rate_scale(), control.real_rate_scale());
  last_control_ = control;
}

Tensor& Amegagrad::step(Tensor& weights, bool do_tune, std::optional<double> gain,
                        const std::optional<DesireGradientControl>& control) {
  std::optional<DesireGradientControl> ctl;
  double h_lr = hyper_.learning_rate(), r_lr = real_.learning_rate();
  if (do_tune) {
    ctl = control ? *control : desire_control(gain);
    std::tie(h_lr, r_lr) = rates(ctl->hyper_rate_scale(), ctl->real_rate_scale());
  }
  const double c = curvature();
  const Tensor w = hyper_.as_matrix(weights, "step");
  const Tensor mid = geometry::rsgd_step(geometry::clip_to_ball(w, c), hyper_.pending_tensor(), c, h_lr);
  const Tensor updated = geometry::clip_to_ball(hyper_.guarded(sub(mid, mul(real_.pending_tensor(), r_lr))), c);
  hyper_.commit(weights, updated, "Amegagrad.step");  // throws, changing nothing, when not finite
  real_.mark_applied();
  if (ctl) {
    hyper_.set_learning_rate(h_lr);
    real_.set_learning_rate(r_lr);
    last_control_ = std::move(ctl);
  }
  return weights;
}

}  // namespace st::zspace
